"""Inbox retention: the window is derived, never typed — twice the longer of the retry horizon
and the dead-letter retention (90 days), at least 30 days: 180 days, and it moves when the
dead-letter retention does."""

from __future__ import annotations

from knowledge_service.base_model import Model

FEED_REPLAY_DAYS = 30
DEAD_LETTER_RETENTION_DAYS = 90
FLOOR_DAYS = 30
DERIVATION = "max(feed replay window, dead-letter retention) x 2, floor 30 days"


def inbox_days(feed_replay_days: int = FEED_REPLAY_DAYS, dead_letter_days: int = DEAD_LETTER_RETENTION_DAYS) -> int:
    return max(max(feed_replay_days, dead_letter_days) * 2, FLOOR_DAYS)


INBOX_RETENTION_DAYS = inbox_days()


class Retention(Model):
    inbox_days: int = INBOX_RETENTION_DAYS
    dead_letter_days: int = DEAD_LETTER_RETENTION_DAYS
    feed_replay_days: int = FEED_REPLAY_DAYS
    derivation: str = DERIVATION
