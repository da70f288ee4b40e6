"""The MCP face: the tools (tools), the SDK's side (sdk), their answers' schemas, the checked stdio, JSON-RPC
lines, paging and the Markdown resources. May import: everything below the commands; tools also commands.
"""
