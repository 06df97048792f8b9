package main

import (
	"testing"
	"time"
)

// A teardown that hangs does not keep the process after the UI quit; one
// that finishes is waited for.
func TestCloseWithin(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	closeWithin(50*time.Millisecond, func() { <-block })
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("closeWithin waited %s for a hung teardown", d)
	}
	ran := false
	closeWithin(time.Hour, func() { ran = true })
	if !ran {
		t.Fatal("closeWithin returned before a quick teardown finished")
	}
}
