"""The configuration: the YAML file per framework, its schema, and per-turn settings."""

from sessionflow_cli.config._document import default_document, default_text
from sessionflow_cli.config._errors import ConfigError, json_pointer
from sessionflow_cli.config._load import default_config, load_config, parse_config, with_model
from sessionflow_cli.config._model import (
    DEFAULT_MODEL,
    DEFAULT_PORT,
    CliConfig,
    ConnectorConfig,
    LocalToolGroup,
    LocalToolsConfig,
    SandboxBackend,
    SandboxConfig,
    ServerConfig,
    ShellConfig,
    TlsConfig,
    TurnConfig,
)
from sessionflow_cli.config._paths import (
    config_home,
    data_home,
    default_config_path,
    default_media_folder,
    history_file,
    server_data_dir,
    state_home,
)
from sessionflow_cli.config._schema import config_schema, config_schema_text, settings_schema
from sessionflow_cli.config._settings import KNOWN_SETTING_KEYS, ignored_setting_keys, resolve_turn

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_PORT",
    "KNOWN_SETTING_KEYS",
    "CliConfig",
    "ConfigError",
    "ConnectorConfig",
    "LocalToolGroup",
    "LocalToolsConfig",
    "ServerConfig",
    "SandboxBackend",
    "SandboxConfig",
    "ShellConfig",
    "TlsConfig",
    "TurnConfig",
    "config_schema",
    "config_home",
    "config_schema_text",
    "data_home",
    "default_config",
    "default_config_path",
    "default_document",
    "default_media_folder",
    "default_text",
    "history_file",
    "ignored_setting_keys",
    "json_pointer",
    "load_config",
    "parse_config",
    "resolve_turn",
    "server_data_dir",
    "settings_schema",
    "state_home",
    "with_model",
]
