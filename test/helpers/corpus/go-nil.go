// SPDX-License-Identifier: LGPL-2.1-or-later
// Corpus: a Go program dereferencing a nil pointer in corpusCrashHere. Run with
// GOTRACEBACK=crash, the runtime prints the goroutines and then kills itself with SIGABRT (Go
// 1.19's runtime.crash) so the kernel dumps; without it, it exits 2 with no core.
package main

import (
	"fmt"
	"os"
)

type corpusNode struct {
	value int
}

//go:noinline
func corpusCrashHere(n *corpusNode) int {
	return n.value + 1
}

//go:noinline
func corpusCrashCaller(n *corpusNode) int {
	return corpusCrashHere(n) * 2
}

func main() {
	if os.Getenv("CORPUS_SYNC") == "1" {
		fmt.Println("ready")
		b := make([]byte, 1)
		if k, _ := os.Stdin.Read(b); k != 1 {
			os.Exit(1)
		}
	}
	fmt.Println(corpusCrashCaller(nil))
}
