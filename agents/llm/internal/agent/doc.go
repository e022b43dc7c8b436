// Package agent is the LLM agent tool (sett-agent-llm): it reads the tool
// input, renders the prompt template of its role, asks the configured model
// under the one retry policy, checks the answer against the role's format
// and prints one answer — or one failure that says what to fix and whether
// a retry can help.
//
// Configuration comes from flags, then the environment the agent is
// configured with in sett.yml (see Config); API keys only from the
// environment, and they never appear in anything the tool prints.
package agent
