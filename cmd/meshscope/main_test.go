package main

import (
	"testing"

	"github.com/meshscope/meshscope/internal/leakcheck"
)

// TestMain fails the tests if a goroutine outlives them: every component
// stops and waits for the goroutines it starts (internal/leakcheck).
func TestMain(m *testing.M) { leakcheck.Main(m) }
