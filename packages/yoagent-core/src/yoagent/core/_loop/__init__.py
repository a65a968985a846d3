"""The agent loop: settings, run state, the model call, the tool runner, the driver."""
