// Package prompt renders the prompts of Sett's model-backed agents
// (agents/llm, agents/coder) from Go text/template files.
//
// A template sees the whole tool input: the goal, the target
// artefact, the context chain, the reviews of a feedback claim, every part
// of the memory (learnings, handbook, shared, upstream), the claim type and
// the iteration; see [Data]. It defines the named templates "system" (may
// be empty) and "user"; the partials of _common.tmpl ("rules", "context",
// "memory", "feedback") place the handbook and the learnings the same way
// in every role, after the learning loop: under "## Company Handbook" and "## Agent
// Memory", each left out when empty.
//
// The templates of the shipped roles (planner, reviewer, writer, learner,
// summariser, coder) are compiled in. An override directory (mounted into
// the container) replaces any of them, _common.tmpl included, file by file;
// a template can also be any file given by path.
package prompt
