"""Validators for the action schemas: bounded, and failing only with Invalid.

Some of Home Assistant's own validators raise TypeError or OverflowError on
hostile values (`person: 3`, `expires_in: {hours: 1e300}`), which reach the
caller as a traceback (HTTP 500). The validators here turn those into
`probatio.Invalid`, which Home Assistant answers as a validation error, and
bound what would overflow later: date arithmetic, and SQLite's 64-bit ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util
import probatio

from .const import DOMAIN
from .engine.models import MAX_SEARCH_LIMIT
from .engine.sql import MAX_ROW_ID

# Longest duration an action takes (`expires_in`, `recency_days`): 100 years.
MAX_DAYS: Final = 36_500
# Dates an action takes (`expires_at`, `since`), in UTC: from 1900 up to, not
# including, 9000, far enough from datetime's year 1 and 9999 that no time
# zone or arithmetic on them overflows.
EARLIEST: Final = datetime(1900, 1, 1, tzinfo=UTC)
LATEST: Final = datetime(9000, 1, 1, tzinfo=UTC)


def guarded(validator: Callable[[Any], Any], message: str) -> Callable[[Any], Any]:
    """Make a validator fail with Invalid(message) whatever it raises."""

    def validate(value: Any) -> Any:
        try:
            return validator(value)
        except probatio.Invalid:
            raise
        except (TypeError, ValueError, OverflowError) as err:
            raise probatio.Invalid(message) from err

    return validate


def moment(value: Any) -> datetime:
    """Take a date and time from 1900 to 8999, in UTC (a naive one is local)."""
    parsed: datetime = guarded(cv.datetime, "expected a date and time")(value)
    try:
        utc = dt_util.as_utc(parsed)
    except (OverflowError, ValueError) as err:
        raise probatio.Invalid("the date is out of range") from err
    if not EARLIEST <= utc < LATEST:
        raise probatio.Invalid(
            f"the date must be from {EARLIEST.year} to {LATEST.year - 1}"
        )
    return utc


PERSON: Final = guarded(
    cv.entity_domain("person"), "expected the entity id of a person (person.*)"
)
# A positive duration of at most MAX_DAYS (a zero one would expire a memory
# as it is stored).
DURATION: Final = probatio.All(
    guarded(cv.time_period, "expected a duration"),
    probatio.Range(min=timedelta(0), min_included=False, max=timedelta(days=MAX_DAYS)),
)
# A number of days above 0 and at most MAX_DAYS; NaN and infinity fail.
DAYS: Final = probatio.All(
    probatio.Coerce(float), probatio.Range(min=0, min_included=False, max=MAX_DAYS)
)
# A language tag such as "de" or "pt-BR" (what Home Assistant's language
# settings hold).
LANGUAGE: Final = probatio.All(
    cv.string,
    probatio.Match(
        r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,3}$",
        msg="expected a language tag such as de or pt-BR",
    ),
)
# A paged listing's fields (the panel's memories and conversations): how
# many a page holds, and the cursor the page before returned.
PAGE_FIELDS: Final[dict[str | probatio.Marker, Any]] = {
    probatio.Optional("limit", default=MAX_SEARCH_LIMIT): probatio.All(
        int, probatio.Range(min=1, max=MAX_SEARCH_LIMIT)
    ),
    probatio.Optional("cursor"): probatio.All(str, probatio.Length(max=200)),
}
# How many ids one call may name (memory.forget, the panel's selection).
MAX_IDS: Final = 500
# An id as the schema takes it; `check_ids` refuses those beyond SQLite's range.
ROW_ID: Final = probatio.All(probatio.Coerce(int), probatio.Range(min=1))


def check_ids(ids: Iterable[int]) -> None:
    """Refuse ids no row can have (beyond SQLite's 64-bit integers).

    Before any lookup: SQLite raises OverflowError when such an id is bound.
    The id is not repeated in the message (it may be thousands of digits).
    """
    if any(item_id > MAX_ROW_ID for item_id in ids):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="id_out_of_range",
            translation_placeholders={"max": str(MAX_ROW_ID)},
        )


# probatio's own words for a refusal, by its translation key: the ones an
# action's data can meet, each with a message of ours in translations/en.json.
_REFUSALS: Final = {
    "range_min": "invalid_field_min",
    "range_max": "invalid_field_max",
    "range_min_exclusive": "invalid_field_above",
    "length_min": "invalid_field_few",
    "length_max": "invalid_field_many",
    "value_one_of": "invalid_field_choice",
    "expected_type": "invalid_field_type",
    "not_a_valid_option": "invalid_field_unknown",
}


class ActionSchema(probatio.Schema):
    """An action's schema whose refusal is a translated `ServiceValidationError`.

    Home Assistant's REST API answers a schema's `Invalid` with a bare
    "400: Bad Request" and no text; a `ServiceValidationError` reaches every
    caller (REST, websocket, scripts, the UI) with its translated message.
    The message names the field and what it must be, never the value given
    (it may be a memory's text).
    """

    def __call__(self, data: Any, **kwargs: Any) -> Any:
        """Validate `data`; refuse it with a translated error."""
        try:
            return super().__call__(data, **kwargs)
        except probatio.Invalid as err:
            first = getattr(err, "errors", None) or [err]
            raise refusal(first[0]) from err


def refusal(err: probatio.Invalid) -> ServiceValidationError:
    """Translate one schema error: the field, and what it must be."""
    field = ".".join(str(part) for part in err.path) or "data"
    placeholders = {
        key: ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        for key, value in (err.placeholders or {}).items()
    }
    key = _REFUSALS.get(err.translation_key or "")
    if key is None:
        key, placeholders = "invalid_field", {"error": err.error_message}
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={"field": field, **placeholders},
    )
