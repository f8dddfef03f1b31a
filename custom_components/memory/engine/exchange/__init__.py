"""Import and export: memories in and out of files.

Export: `markdown` (readable views), `export_json` (the lossless copy),
`export_files` (files on disk). Import: `import_entries`, `import_formats`,
`import_text`, `import_similar`, `importing` (preview and one-transaction
import by `memory.add`'s rules).
"""
