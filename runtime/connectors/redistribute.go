package connectors

// dealOut deals items out round-robin to parallelism subtasks, in order, and returns each
// subtask's share as encode writes it (an empty share for a subtask that gets none).
func dealOut[T any](items []T, parallelism int, encode func(share []T) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, parallelism)
	for i := range out {
		share := []T{}
		for k := i; k < len(items); k += parallelism {
			share = append(share, items[k])
		}
		b, err := encode(share)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
