package tui

import (
	"fmt"
	"testing"
)

func TestDbgPrint(t *testing.T) {
	m := goldenModel(t, "default", 80, 24)
	m.push(viewProblems)
	fmt.Println(plain(m))
	m.push(viewClusters)
	fmt.Println(plain(m))
	m.openService(helloHost)
	fmt.Println(plain(m))
	m.push(viewServices)
	fmt.Println(plain(m))
	m.Update(windowSize(60, 15))
	fmt.Println(plain(m))
}
