package writer

// Copying returns opts with the records copied into the writer's buffers
// even from a reader that could keep them: the tests compare both ways.
func Copying(opts Options) Options {
	opts.copyRecords = true
	return opts
}
