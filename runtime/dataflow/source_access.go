package dataflow

// WrapSource replaces the job's source with wrap(source), for tests that inject failures
// or count reads.
func (j *Job) WrapSource(wrap func(Source) Source) { j.source = wrap(j.source) }
