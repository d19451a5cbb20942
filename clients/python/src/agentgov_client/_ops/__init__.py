"""The operations of the API, each written once as a builder of a flow (`agentgov_client._flow`).

Every builder takes the client (`ClientCore`) first; `Client` and `AsyncClient` expose each one as a method
with the same name and parameters. Unless a docstring says otherwise, an operation raises the
`APIStatusError` subclass of the service's error answer, or `APIConnectionError` when no answer arrived,
and is retried only when it is safe to repeat (see `agentgov_client.retries`).
"""
