package sessions

import (
	"errors"
	"fmt"
)

// FileError is a failure to read a file a person chose, with the file's
// name as they know it (its base name, never changed), so that the words
// shown can name it as it is.
type FileError struct {
	Name string // the file's base name
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.Name, e.Err) }

func (e *FileError) Unwrap() error { return e.Err }

// ErrFolder is what a FileError holds when the path chosen is a folder.
var ErrFolder = errors.New("a folder, not a file")
