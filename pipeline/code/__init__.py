"""Running generated code: `pipeline.code.sandbox.run_program` executes an untrusted Python program in an
isolated, resource-limited child process and reports how it ended (see `docs/sandbox.md`)."""
