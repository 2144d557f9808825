// Command junk prints to stdout where a plugin's handshake belongs, then waits.
//
// It links nothing of the SDK: it is not a plugin, only a process a host starts as one.
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("hello, I am not a plugin")
	time.Sleep(time.Minute)
}
