"""The transport of the query service: gRPC servicers, the gate (auth, rules, admission,
deadlines), tracing, and proto conversion. It converts, admits and calls the engine."""
