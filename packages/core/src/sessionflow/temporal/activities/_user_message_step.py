"""The user message step (``sessionflow.BuildUserMessage``): the runner builds a user's message.

A local activity: it runs on the workflow's worker. Images given as media references are
copied from the payload store first, since the runner reads them by path; a large message
goes back to the store and the workflow records its reference.
"""

from __future__ import annotations

from temporalio import activity

from sessionflow.session.bodies import is_media_ref
from sessionflow.session.errors import SessionStateError
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.session.runner import ImageInput
from sessionflow.temporal._payloads import BUILD_USER_MESSAGE, BuildUserMessageInput
from sessionflow.temporal.activities._step_context import StepActivities, store_scope
from sessionflow.temporal.storage._media import local_copy

__all__ = ["UserMessageActivities"]


class UserMessageActivities(StepActivities):
    """BuildUserMessage for one flow on one worker."""

    @activity.defn(name=BUILD_USER_MESSAGE)
    async def build_user_message(self, request: BuildUserMessageInput) -> FrameworkMessage:
        with self._failures_reported():
            return await self._build_user_message(request)

    async def _build_user_message(self, request: BuildUserMessageInput) -> FrameworkMessage:
        runner = self._steps.flow.runner
        if request.images:
            images = [await self._image(image) for image in request.images]
            # The contract's default refuses with a SessionStateError, which is not retryable.
            message = runner.build_user_message_with_images(request.text, images)
        else:
            message = runner.build_user_message(request.text)
        if message.role is not MessageRole.USER:
            raise SessionStateError(f"build_user_message returned role {message.role!r}, expected 'user'")
        if self._steps.bodies is not None:
            message = await self._steps.bodies.store_message(message, store_scope())
        return message

    async def _image(self, image: str) -> ImageInput:
        if not is_media_ref(image):
            return ImageInput(path=image, media_type=_media_type(image))  # a path every worker reaches
        path, media_type = await local_copy(self._steps.require_bodies(), image)
        return ImageInput(path=str(path), media_type=media_type)


def _media_type(path: str) -> str:
    suffix = path.rsplit(".", 1)[-1].lower()
    return {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
    }.get(suffix, "application/octet-stream")
