package sdk

import (
	"time"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// Converters of the plugin end between the sdk's types and the protocol's messages. The
// host end (sdk/internal/client) has its own for the types that cross both ways (handles,
// key-group ranges, scopes, completed locations): it cannot reach these, and package sdk
// cannot import it (see docs/architecture.md, "The SDK's two ends").

func scopeToProto(s Scope) pb.Scope {
	if s == ScopeShared {
		return pb.Scope_SCOPE_SHARED
	}
	return pb.Scope_SCOPE_EXCLUSIVE
}

func scopeFromProto(s pb.Scope) Scope {
	if s == pb.Scope_SCOPE_SHARED {
		return ScopeShared
	}
	return ScopeExclusive
}

func streamHandleToProto(h StreamStateHandle) *pb.StreamStateHandle {
	return &pb.StreamStateHandle{Ref: h.Ref, Inline: h.Inline, Size: h.Size, Scope: scopeToProto(h.Scope), Checksum: h.Checksum}
}

func streamHandleFromProto(h *pb.StreamStateHandle) StreamStateHandle {
	if h == nil {
		return StreamStateHandle{}
	}
	return StreamStateHandle{Ref: h.Ref, Inline: h.Inline, Size: h.Size, Scope: scopeFromProto(h.Scope), Checksum: h.Checksum}
}

func keyGroupsFromProto(r *pb.KeyGroupRange) KeyGroupRange {
	if r == nil {
		return KeyGroupRange{}
	}
	return KeyGroupRange{Start: int(r.Start), End: int(r.End)}
}

func keyedHandlesToProto(hs []KeyedStateHandle) []*pb.KeyedStateHandle {
	out := make([]*pb.KeyedStateHandle, len(hs))
	for i, h := range hs {
		files := make([]*pb.NamedStateHandle, len(h.Files))
		for j, f := range h.Files {
			files[j] = &pb.NamedStateHandle{Name: f.Name, Handle: streamHandleToProto(f.Handle)}
		}
		kg := &pb.KeyGroupRange{Start: int32(h.KeyGroups.Start), End: int32(h.KeyGroups.End)}
		out[i] = &pb.KeyedStateHandle{KeyGroups: kg, Format: h.Format, Files: files, Meta: h.Meta}
	}
	return out
}

func keyedHandlesFromProto(hs []*pb.KeyedStateHandle) []KeyedStateHandle {
	out := make([]KeyedStateHandle, len(hs))
	for i, h := range hs {
		var files []NamedStateHandle
		if len(h.Files) > 0 {
			files = make([]NamedStateHandle, len(h.Files))
		}
		for j, f := range h.Files {
			files[j] = NamedStateHandle{Name: f.Name, Handle: streamHandleFromProto(f.Handle)}
		}
		out[i] = KeyedStateHandle{KeyGroups: keyGroupsFromProto(h.KeyGroups), Format: h.Format, Files: files, Meta: h.Meta}
	}
	return out
}

func completedToProto(c CompletedCheckpointStorageLocation) *pb.CompletedLocation {
	var t int64
	if !c.Time.IsZero() {
		t = c.Time.UnixNano()
	}
	return &pb.CompletedLocation{ExternalPointer: c.ExternalPointer, Metadata: streamHandleToProto(c.Metadata), CheckpointId: c.CheckpointID, TimeUnixNano: t}
}

func completedFromProto(c *pb.CompletedLocation) CompletedCheckpointStorageLocation {
	if c == nil {
		return CompletedCheckpointStorageLocation{}
	}
	var t time.Time
	if c.TimeUnixNano != 0 {
		t = time.Unix(0, c.TimeUnixNano)
	}
	return CompletedCheckpointStorageLocation{ExternalPointer: c.ExternalPointer, Metadata: streamHandleFromProto(c.Metadata), CheckpointID: c.CheckpointId, Time: t}
}

func paramsFromProto(p *pb.CreateKeyedBackendRequest) KeyedBackendParams {
	return KeyedBackendParams{
		JobID:          p.JobId,
		OperatorID:     p.OperatorId,
		Subtask:        int(p.Subtask),
		Parallelism:    int(p.Parallelism),
		MaxParallelism: int(p.MaxParallelism),
		KeyGroups:      keyGroupsFromProto(p.KeyGroups),
	}
}
