package reader

// SetMaxDataFiles lowers the bound on a directory recording's data files
// until the returned function restores it.
func SetMaxDataFiles(n int) (restore func()) {
	old := maxDataFiles
	maxDataFiles = n
	return func() { maxDataFiles = old }
}
