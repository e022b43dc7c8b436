package memory

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Bounds of the shared memory's pruned sections. Lessons Learned has none:
// the memory and review design never prunes it.
const (
	// MaxRecentDecisions is how many Recent Decisions entries are kept (the
	// newest).
	MaxRecentDecisions = 20
	// MaxRecentUpdates is how many Recent Updates entries are kept (the
	// newest).
	MaxRecentUpdates = 20
	// MaxArtifactRows is how many Artifact Index rows are kept (the most
	// recently updated).
	MaxArtifactRows = 50
	// maxEntryLen bounds the text of one generated entry, in characters.
	maxEntryLen = 2 * MaxTextLen
)

// sharedVersion is the version of the JSON form that Encode writes.
const sharedVersion = 1

// SharedMemory is a workflow's shared memory (the memory and review design's memory.md), which
// only the orchestrator writes, through Merge and AddUpdate.
//
// Every list is in the order entries were added, oldest first; the
// Artifact Index is in the order rows were last updated, least recent
// first. The zero value is an empty shared memory, ready to use. A
// SharedMemory is a value: Merge and AddUpdate return a new one and never
// modify their argument, so it is safe for concurrent reads.
type SharedMemory struct {
	ArtifactIndex   []ArtifactRow `json:"artifact_index"`
	RecentDecisions []Entry       `json:"recent_decisions"`
	LessonsLearned  []Entry       `json:"lessons_learned"`
	RecentUpdates   []Entry       `json:"recent_updates"`

	// Agents remembers each agent's latest status, so that a later DONE
	// can become a lesson. Keyed by agent name.
	Agents map[string]AgentState `json:"agents"`
	// MergedIDs are the ids of every contribution merged so far, sorted;
	// never pruned, so that a replayed merge changes nothing.
	MergedIDs []string `json:"merged_ids"`
	// UpdateKeys are the keys of every AddUpdate applied so far, sorted.
	UpdateKeys []string `json:"update_keys"`
}

// ArtifactRow is one row of the shared Artifact Index: one artefact file,
// the sections agents pointed to in it, and who last pointed to it.
type ArtifactRow struct {
	Path     string   `json:"path"`
	Sections []string `json:"sections"`
	// Note is the latest non-empty note given for the file.
	Note string `json:"note,omitempty"`
	// UpdatedBy is "agent, step" of the last contribution that named the
	// file.
	UpdatedBy string `json:"updated_by"`
}

// Entry is one line of Recent Decisions, Lessons Learned or Recent
// Updates, rendered "- [agent, step] text".
type Entry struct {
	Agent string `json:"agent"`
	Step  string `json:"step,omitempty"`
	Text  string `json:"text"`
}

// AgentState is what the shared memory remembers of one agent: the status
// of its latest merged memory and, while that status is not DONE, the issue
// it reported.
type AgentState struct {
	Status Status `json:"status"`
	Step   string `json:"step,omitempty"`
	// Issue describes what was wrong, while Status is NEEDS_REVISION or
	// ERROR.
	Issue string `json:"issue,omitempty"`
}

// sharedJSON is the stored form: the version first, and empty lists as
// [] rather than null, so that equal memories encode to equal bytes.
type sharedJSON struct {
	Version int `json:"version"`
	sharedFields
}

type sharedFields SharedMemory

// MarshalJSON encodes s with a version field and with nil lists and maps
// written as empty ones, so equal memories always give equal bytes.
func (s SharedMemory) MarshalJSON() ([]byte, error) {
	n := s.clone()
	if n.Agents == nil {
		n.Agents = map[string]AgentState{}
	}
	n.ArtifactIndex = nonNil(n.ArtifactIndex)
	for i := range n.ArtifactIndex {
		n.ArtifactIndex[i].Sections = nonNil(n.ArtifactIndex[i].Sections)
	}
	n.RecentDecisions = nonNil(n.RecentDecisions)
	n.LessonsLearned = nonNil(n.LessonsLearned)
	n.RecentUpdates = nonNil(n.RecentUpdates)
	n.MergedIDs = nonNil(n.MergedIDs)
	n.UpdateKeys = nonNil(n.UpdateKeys)
	return json.Marshal(sharedJSON{Version: sharedVersion, sharedFields: sharedFields(n)})
}

// Encode returns the JSON form of s, as stored in Redis. Equal memories
// give equal bytes.
func (s SharedMemory) Encode() []byte {
	b, err := s.MarshalJSON()
	if err != nil {
		// Only strings, ints and maps keyed by strings: json cannot fail.
		panic("memory: encoding shared memory: " + err.Error())
	}
	return b
}

// DecodeShared reads what Encode wrote. Empty data (nothing stored yet) is
// the empty shared memory. It returns an error wrapping ErrSharedVersion
// for a version it does not know, or the JSON error for data that is not a
// shared memory.
func DecodeShared(data []byte) (SharedMemory, error) {
	if len(data) == 0 {
		return SharedMemory{}, nil
	}
	var v sharedJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return SharedMemory{}, fmt.Errorf("memory: decode shared memory: %w", err)
	}
	if v.Version != sharedVersion {
		return SharedMemory{}, fmt.Errorf("%w %d (this build reads version %d)", ErrSharedVersion, v.Version, sharedVersion)
	}
	return SharedMemory(v.sharedFields), nil
}

// clone returns a deep copy of s.
func (s SharedMemory) clone() SharedMemory {
	n := SharedMemory{
		ArtifactIndex:   slices.Clone(s.ArtifactIndex),
		RecentDecisions: slices.Clone(s.RecentDecisions),
		LessonsLearned:  slices.Clone(s.LessonsLearned),
		RecentUpdates:   slices.Clone(s.RecentUpdates),
		MergedIDs:       slices.Clone(s.MergedIDs),
		UpdateKeys:      slices.Clone(s.UpdateKeys),
	}
	for i := range n.ArtifactIndex {
		n.ArtifactIndex[i].Sections = slices.Clone(n.ArtifactIndex[i].Sections)
	}
	if s.Agents != nil {
		n.Agents = make(map[string]AgentState, len(s.Agents))
		for k, v := range s.Agents {
			n.Agents[k] = v
		}
	}
	return n
}

// prune drops the oldest entries beyond the bounds.
func (s *SharedMemory) prune() {
	s.RecentDecisions = keepNewest(s.RecentDecisions, MaxRecentDecisions)
	s.RecentUpdates = keepNewest(s.RecentUpdates, MaxRecentUpdates)
	s.ArtifactIndex = keepNewest(s.ArtifactIndex, MaxArtifactRows)
}

// keepNewest returns the last n items of list, in a fresh slice when it
// cuts, so the dropped items are not kept alive.
func keepNewest[T any](list []T, n int) []T {
	if len(list) <= n {
		return list
	}
	return slices.Clone(list[len(list)-n:])
}

func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// hasSorted reports whether sorted list holds s.
func hasSorted(list []string, s string) bool {
	_, ok := slices.BinarySearch(list, s)
	return ok
}

// insertSorted adds s to sorted list, keeping it sorted.
func insertSorted(list []string, s string) []string {
	i, ok := slices.BinarySearch(list, s)
	if ok {
		return list
	}
	return slices.Insert(list, i, s)
}
