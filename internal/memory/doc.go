// Package memory holds the compact memories of the memory and review design: the
// memory one agent returns for one piece of work ([AgentMemory]), and the
// workflow's shared memory that the orchestrator alone merges them into
// ([SharedMemory]).
//
// Everything here is pure: values in, values out, no I/O and no clock, so
// that the cub and the orchestrator can store the results in Redis
// atomically and replay them idempotently.
//
// An agent memory comes from a tool's output as JSON. [ParseAgentMemory]
// validates it strictly and returns a [*MemoryError] naming the field at
// fault and what is allowed, so the cub can turn it into a Failure.
// [RenderAgentMemory] renders it in the memory and review design's `# Memory: <agent>` Markdown,
// which is at most [MaxRenderedLines] lines for every memory that
// ParseAgentMemory accepts.
//
// The shared memory has the memory and review design's four sections: Artifact Index, Recent
// Decisions, Lessons Learned and Recent Updates. [Merge] applies the memory and review design's
// merge sequence to a batch of [Contribution]s:
//
//  1. each contribution's artifact index entries update the Artifact Index
//     (one row per path; sections accumulate, the last writer is noted);
//  2. each of its decisions becomes a Recent Decisions entry;
//  3. its status, severity and summary (or key findings) become one Recent
//     Updates entry;
//  4. an agent whose earlier memory in this workflow was NEEDS_REVISION or
//     ERROR and whose memory is now DONE yields one Lessons Learned entry,
//     "issue → resolution", built from the two memories.
//
// Merge is deterministic (a batch is applied in the order of
// [Contribution.Compare], whatever order it arrives in) and idempotent (the ids
// of merged contributions are kept, and a contribution seen before changes
// nothing), so a merge replayed after a crash gives byte-identical JSON.
//
// Sizes are bounded so the shared memory stays small enough to hand to every
// tool: Recent Decisions and Recent Updates keep their newest
// [MaxRecentDecisions] and [MaxRecentUpdates] entries, the Artifact Index its
// [MaxArtifactRows] most recently updated rows. Lessons Learned is never
// pruned (the memory and review design: "Never pruned").
//
// [AddUpdate] records one line in Recent Updates under a caller-chosen key,
// also idempotently; the orchestrator uses it for its review decisions.
// [RenderShared] renders the memory and review design's `# Operational Memory` Markdown.
package memory
