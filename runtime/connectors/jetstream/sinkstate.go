package jetstream

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// sinkMagic starts a sink state: the format's name and version.
var sinkMagic = []byte("FSJS\x01")

// sinkState is what a sink writer keeps in a checkpoint: the checkpoint's id, its pending
// transactions with their records, the last sequence it saw on each marker chain it holds,
// and (in a state Redistribute made) the chains of old subtasks it must fence.
//
// Encoded: sinkMagic, the uvarint length of a JSON header (this struct, the transactions
// without their records), then for each transaction its records, each the uvarint index
// of its subject, the uvarint length of its payload and the payload.
type sinkState struct {
	Job string `json:"job"`
	// Checkpoint is the id of the checkpoint the state is of (0 in states written before
	// it was recorded): a restore refuses a chain that shows a later checkpoint committed.
	Checkpoint int64             `json:"checkpoint,omitempty"`
	Chains     map[string]uint64 `json:"chains"`
	Adopted    []int             `json:"adopted,omitempty"`
	Txs        []*tx             `json:"txs"`
}

func (st sinkState) encode() ([]byte, error) {
	if st.Txs == nil {
		st.Txs = []*tx{}
	}
	hdr, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	size := len(sinkMagic) + binary.MaxVarintLen64 + len(hdr)
	for _, t := range st.Txs {
		size += len(t.data) + 2*binary.MaxVarintLen32*t.Records
	}
	b := make([]byte, 0, size)
	b = append(b, sinkMagic...)
	b = binary.AppendUvarint(b, uint64(len(hdr)))
	b = append(b, hdr...)
	for _, t := range st.Txs {
		for i := 0; i < t.Records; i++ {
			p := t.payload(i)
			b = binary.AppendUvarint(b, uint64(t.subj[i]))
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
		}
	}
	return b, nil
}

var errTruncated = errors.New("truncated")

func decodeSinkState(b []byte) (sinkState, error) {
	var st sinkState
	if !bytes.HasPrefix(b, sinkMagic) {
		return st, fmt.Errorf("not a jetstream sink state (%d bytes)", len(b))
	}
	b = b[len(sinkMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return st, fmt.Errorf("header: %w", errTruncated)
	}
	if err := json.Unmarshal(b[k:k+int(n)], &st); err != nil {
		return st, fmt.Errorf("header: %w", err)
	}
	b = b[k+int(n):]
	if st.Chains == nil {
		st.Chains = map[string]uint64{}
	}
	for ti, t := range st.Txs {
		if t == nil || t.Records < 0 || t.PartSize < 1 {
			return st, fmt.Errorf("transaction %d: bad header", ti)
		}
		t.subj = make([]int32, 0, t.Records)
		t.ends = make([]int, 0, t.Records)
		for i := 0; i < t.Records; i++ {
			s, k := binary.Uvarint(b)
			if k <= 0 || s >= uint64(len(t.Subjects)) {
				return st, fmt.Errorf("transaction %d record %d: bad subject", ti, i)
			}
			b = b[k:]
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) {
				return st, fmt.Errorf("transaction %d record %d: %w", ti, i, errTruncated)
			}
			b = b[k:]
			t.data = append(t.data, b[:n]...)
			b = b[n:]
			t.subj = append(t.subj, int32(s))
			t.ends = append(t.ends, len(t.data))
		}
	}
	if len(b) != 0 {
		return st, fmt.Errorf("%d bytes after the last transaction", len(b))
	}
	return st, nil
}
