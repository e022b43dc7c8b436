package cli

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/termsafe"
)

// memoryView is what `sett memory -o json` prints.
type memoryView struct {
	WorkflowID string                        `json:"workflow_id"`
	Shared     *memory.SharedMemory          `json:"shared,omitempty"`
	Agents     map[string]memory.AgentMemory `json:"agents,omitempty"`
}

func newMemoryCmd(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "memory WORKFLOW [AGENT] [-o text|json]",
		Short: "Print a workflow's shared memory, or one agent's memory",
		Long: `Print the memory of a workflow: without AGENT, the shared memory the
orchestrator merged from its agents' memories (Artifact Index, Recent
Decisions, Lessons Learned, Recent Updates) followed by every agent's
latest memory; with AGENT, that agent's memory only. Tools receive them as
memory.shared and memory.upstream.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError("give a workflow id, and optionally an agent name")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(output, "text", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			return app.withBlackboard(ctx, func(bb *blackboard.Client) error {
				wf, err := resolveWorkflow(ctx, bb, args[0])
				if err != nil {
					return err
				}
				doc, _, err := bb.GetSharedMemory(ctx, wf.ID)
				if err != nil {
					return err
				}
				stored, err := bb.AgentMemories(ctx, wf.ID)
				if err != nil {
					return err
				}
				v := memoryView{WorkflowID: wf.ID, Agents: map[string]memory.AgentMemory{}}
				if doc != "" {
					s, err := memory.DecodeShared([]byte(doc))
					if err != nil {
						return fmt.Errorf("the shared memory of workflow %s does not decode: %w", blackboard.ShortID(wf.ID), err)
					}
					v.Shared = &s
				}
				for agent, sm := range stored {
					var m memory.AgentMemory
					if err := json.Unmarshal([]byte(sm.Memory), &m); err == nil {
						v.Agents[agent] = m
					}
				}
				if len(args) == 2 {
					m, ok := v.Agents[args[1]]
					if !ok {
						return fmt.Errorf("agent %s left no memory in workflow %s (agents with one: %v)", args[1], blackboard.ShortID(wf.ID), sortedNames(v.Agents))
					}
					v.Shared, v.Agents = nil, map[string]memory.AgentMemory{args[1]: m}
				}
				out := cmd.OutOrStdout()
				if output == "json" {
					return writeJSONIndent(out, v)
				}
				if v.Shared == nil && len(v.Agents) == 0 {
					fmt.Fprintf(out, "Workflow %s has no memory yet: its tools returned none (a tool's output may carry a memory object).\n", blackboard.ShortID(wf.ID))
					return nil
				}
				if v.Shared != nil {
					fmt.Fprintln(out, termsafe.String(memory.RenderShared(*v.Shared)))
				}
				for _, agent := range sortedNames(v.Agents) {
					fmt.Fprintln(out, termsafe.String(memory.RenderAgentMemory(agent, v.Agents[agent])))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
