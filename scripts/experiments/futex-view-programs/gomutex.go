// Go's sync.Mutex, contended by eight goroutines. A goroutine that waits
// for a sync.Mutex is parked by the Go scheduler on a semaphore of the
// runtime's own (runtime_SemacquireMutex), not on a futex: the futex view
// sees the runtime's futexes instead, on which idle OS threads (Ms) sleep
// when the scheduler has no goroutine for them (runtime.futexsleep, under
// notesleep and stopm). Built by scripts/experiments/futex-view-programs.py.
package main

import (
	"fmt"
	"sync"
)

var (
	ledgerLock sync.Mutex
	ledger     uint64
)

func main() {
	var wg sync.WaitGroup
	for t := uint64(0); t < 8; t++ {
		wg.Add(1)
		go func(t uint64) {
			defer wg.Done()
			for i := uint64(0); i < 20000; i++ {
				ledgerLock.Lock()
				for k := uint64(0); k < 200; k++ {
					ledger = ledger*31 + (i ^ k ^ t)
				}
				ledgerLock.Unlock()
			}
		}(t)
	}
	wg.Wait()
	fmt.Printf("ledger=%d\n", ledger)
}
