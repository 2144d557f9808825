package dataflow

import "fmt"

// fence runs Env.Fence before a commit; its error says which commit it stopped.
func (a *attempt) fence(format string, args ...any) error {
	if a.env.Fence == nil {
		return nil
	}
	if err := a.env.Fence(); err != nil {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
	}
	return nil
}
