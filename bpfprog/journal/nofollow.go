package journal

import "syscall"

const syscallNoFollow = syscall.O_NOFOLLOW
