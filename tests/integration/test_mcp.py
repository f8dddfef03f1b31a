"""The memory tools reach MCP clients through Home Assistant's MCP Server.

Nothing in Assist Memory speaks MCP: the `mcp_server` integration serves the
LLM APIs over HTTP (`/api/mcp`), and the memory tools are part of the Assist
API. This keeps that path working over real HTTP, one JSON-RPC request a POST
as MCP's Streamable HTTP transport sends them, with an admin's token.
"""

from __future__ import annotations

from itertools import count
import json
from typing import Any

from homeassistant.components.mcp_server.const import (
    CONF_ALL_LLM_APIS,
    CONF_REQUIRE_ADMIN,
    DOMAIN as MCP_DOMAIN,
)
from homeassistant.config_entries import SOURCE_USER
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.memory.const import DOMAIN

MCP_URL = "/api/mcp"
MEMORY_TOOLS = [
    "assist__memory__search",
    "assist__memory__add",
    "assist__memory__forget",
]


class McpClient:
    """JSON-RPC over MCP's Streamable HTTP transport, one request a POST."""

    def __init__(self, hass_client: ClientSessionGenerator) -> None:
        """Remember how to open an authenticated session."""
        self._hass_client = hass_client
        self._ids = count(1)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its result (failing on a JSON-RPC error)."""
        client = await self._hass_client()
        response = await client.post(
            MCP_URL,
            json={
                "jsonrpc": "2.0",
                "id": next(self._ids),
                "method": method,
                "params": params,
            },
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert response.status == 200, await response.text()
        body: dict[str, Any] = await response.json()
        assert "error" not in body, body
        result: dict[str, Any] = body["result"]
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call a tool and return the JSON it answered."""
        result = await self.request(
            "tools/call", {"name": name, "arguments": arguments}
        )
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])


@pytest.fixture
async def mcp(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    hass_client: ClientSessionGenerator,
) -> McpClient:
    """Home Assistant's MCP Server, added as a user adds it (every LLM API)."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "llm", {})
    result = await hass.config_entries.flow.async_init(
        MCP_DOMAIN, context={"source": SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    return McpClient(hass_client)


async def select_apis(hass: HomeAssistant, *api_ids: str) -> None:
    """Serve only these LLM APIs, through the MCP Server's options."""
    entry = hass.config_entries.async_entries(MCP_DOMAIN)[0]
    result = await hass.config_entries.options.async_init(entry.entry_id)
    # Turning "all LLM APIs" off shows the API picker; then pick.
    choice = {CONF_ALL_LLM_APIS: False, CONF_REQUIRE_ADMIN: True}
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], choice
    )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**choice, CONF_LLM_HASS_API: list(api_ids)}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY, result
    await hass.async_block_till_done()


async def test_tools_are_listed(mcp: McpClient) -> None:
    """An MCP client sees the three memory tools, with their schemas."""
    result = await mcp.request("tools/list", {})

    tools = {tool["name"]: tool for tool in result["tools"]}
    assert [name for name in tools if "memory" in name] == MEMORY_TOOLS
    search = tools["assist__memory__search"]
    assert "query" in search["inputSchema"]["properties"]
    assert search["annotations"]["readOnlyHint"] is True
    assert tools["assist__memory__forget"]["annotations"]["destructiveHint"] is True


async def test_only_the_assist_api_selected(
    hass: HomeAssistant, mcp: McpClient
) -> None:
    """With Assist alone selected, the tools keep their own names, and work."""
    await select_apis(hass, llm.LLM_API_ASSIST)

    result = await mcp.request("tools/list", {})
    names = [tool["name"] for tool in result["tools"]]
    assert [name for name in names if "memory" in name] == [
        "memory__search",
        "memory__add",
        "memory__forget",
    ]
    added = await mcp.call_tool("memory__add", {"content": "Bins go out on Thursday"})
    found = await mcp.call_tool("memory__search", {"query": "bins"})
    assert [hit["id"] for hit in found["memories"]] == [added["id"]]


async def test_add_then_search_over_mcp(hass: HomeAssistant, mcp: McpClient) -> None:
    """A memory added over MCP is stored, found over MCP, and can be forgotten."""
    added = await mcp.call_tool(
        "assist__memory__add", {"content": "Mia is allergic to nuts"}
    )

    found = await mcp.call_tool("assist__memory__search", {"query": "allergic"})
    assert found["memories"] == [{"id": added["id"], "text": "Mia is allergic to nuts"}]
    # The same memory the actions see.
    response = await hass.services.async_call(
        DOMAIN, "get", {"id": added["id"]}, blocking=True, return_response=True
    )
    assert response is not None
    assert response["content"] == "Mia is allergic to nuts"

    await mcp.call_tool("assist__memory__forget", {"ids": [added["id"]]})
    found = await mcp.call_tool("assist__memory__search", {"query": "allergic"})
    assert found["memories"] == []
