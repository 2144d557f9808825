// Command junk prints to stdout where a plugin's handshake belongs, then waits.
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("hello, I am not a plugin")
	time.Sleep(time.Minute)
}
