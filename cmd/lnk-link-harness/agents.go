package main

import "github.com/lnk-dev/link/cmd/internal/agentsfile"

// agentLine is one line of an agents file (serve --agents), read by
// cmd/internal/agentsfile, which lnk scheduler serve reads too.
type agentLine = agentsfile.Line

// maxAgentsFile bounds an agents file.
const maxAgentsFile = agentsfile.MaxFile

// readAgentsFile reads and checks the agents file at path.
func readAgentsFile(path string) ([]agentLine, error) { return agentsfile.Read(path) }

// parseAgents reads an agents file's bytes.
func parseAgents(b []byte) ([]agentLine, error) { return agentsfile.Parse(b) }
