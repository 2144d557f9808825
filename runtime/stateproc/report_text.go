package stateproc

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the report for people: a header, then tables of the operators, their
// keyed states, their keyed state handles and the shared files referenced.
func (r *Report) WriteText(w io.Writer) error {
	job := fmt.Sprintf("%q", r.Job)
	if r.JobType != "" {
		job += " (" + r.JobType + ")"
	}
	kind := "full"
	if r.Incremental {
		kind = fmt.Sprintf("incremental, %d bytes added", r.AddedBytes)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s %d of job %s\n", r.Kind, r.CheckpointID, job)
	fmt.Fprintf(tw, "  pointer\t%s\n", r.Pointer)
	fmt.Fprintf(tw, "  taken\t%s by state backend %s\n", r.Time.Format(time.RFC3339), r.Backend)
	fmt.Fprintf(tw, "  max parallelism\t%d\n", r.MaxParallelism)
	fmt.Fprintf(tw, "  size\t%d bytes (%s)\n", r.Size, kind)

	fmt.Fprintln(tw, "\nOPERATOR\tTYPE\tPARALLELISM\tNON-KEYED BYTES\tENTRIES\tBYTES")
	for _, op := range r.Operators {
		entries, bytes := "-", "-"
		if op.keyed() {
			entries, bytes = strconv.FormatInt(op.Entries, 10), strconv.FormatInt(op.Bytes, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", op.ID, op.Type, op.Parallelism, op.OperatorStateBytes, entries, bytes)
	}

	fmt.Fprintln(tw, "\nSTATE\tTYPE\tENTRIES\tBYTES")
	for _, op := range r.Operators {
		for _, s := range op.States {
			typ := s.Type
			if typ == "" {
				typ = "(not recorded)"
			}
			fmt.Fprintf(tw, "%s/%s\t%s\t%d\t%d\n", op.ID, s.Name, typ, s.Entries, s.Bytes)
		}
	}

	fmt.Fprintln(tw, "\nSUBTASK\tKEY GROUPS\tFORMAT\tENTRIES\tBYTES\tFILES")
	for _, op := range r.Operators {
		for _, st := range op.Subtasks {
			for _, h := range st.Handles {
				entries, bytes := strconv.FormatInt(h.Entries, 10), strconv.FormatInt(h.Bytes, 10)
				if !h.Decoded {
					entries, bytes = "not decoded", "-"
				}
				var files []string
				for _, f := range h.Files {
					files = append(files, fmt.Sprintf("%s (%d B, %s)", f.Name, f.Size, f.Scope))
				}
				fmt.Fprintf(tw, "%s/%d\t[%d,%d)\t%s\t%s\t%s\t%s\n", op.ID, st.Index, h.KeyGroups[0], h.KeyGroups[1], h.Format, entries, bytes, strings.Join(files, ", "))
			}
		}
	}

	fmt.Fprintf(tw, "\nSHARED FILES: %d\n", len(r.SharedFiles))
	for _, f := range r.SharedFiles {
		fmt.Fprintf(tw, "%s\t%d B\t%s\n", f.Ref, f.Size, strings.Join(f.ReferencedBy, ", "))
	}
	return tw.Flush()
}

// keyed reports whether the operator declares keyed states or holds keyed state handles.
func (op *OperatorReport) keyed() bool {
	if len(op.States) > 0 {
		return true
	}
	for _, st := range op.Subtasks {
		if len(st.Handles) > 0 {
			return true
		}
	}
	return false
}
