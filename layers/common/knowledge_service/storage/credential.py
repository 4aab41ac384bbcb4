"""The FORAGER credential, in SSM Parameter Store as a SecureString.

Written by ``POST /settings`` and never read back through any route; the upstream client
is the one reader. Reads go through Powertools' SSM provider, cached for a minute per
container and cleared by a write in the same container.
"""

from __future__ import annotations

import contextlib
from typing import Any

from aws_lambda_powertools.utilities.parameters import SSMProvider
from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError
from botocore.exceptions import ClientError

CACHE_SECONDS = 60


class CredentialStore:
    def __init__(self, ssm_client: Any, parameter_name: str):
        self._client = ssm_client
        self._name = parameter_name
        self._provider = SSMProvider(boto3_client=ssm_client)

    def read(self) -> str | None:
        """The credential, or None when none was ever written."""
        try:
            value = self._provider.get(self._name, decrypt=True, max_age=CACHE_SECONDS)
        except GetParameterError as error:
            cause = error.__cause__ or error.__context__
            if isinstance(cause, ClientError) and cause.response.get("Error", {}).get("Code") == "ParameterNotFound":
                return None
            raise
        return str(value) if value else None

    def write(self, value: str) -> None:
        self._client.put_parameter(Name=self._name, Value=value, Type="SecureString", Overwrite=True)
        self._provider.clear_cache()

    def remove(self) -> None:
        with contextlib.suppress(self._client.exceptions.ParameterNotFound):
            self._client.delete_parameter(Name=self._name)
        self._provider.clear_cache()
