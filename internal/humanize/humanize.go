// Package humanize formats numbers for people, the same way everywhere in
// meshscope (the terminal UI and the command line output).
package humanize

import "fmt"

// Bytes renders a size in bytes with binary units: 512B, 9.8KiB, 79.3KiB,
// 512KiB, 1.5MiB, 2.0GiB. One decimal below 100 of a unit, none above, so
// the text is never longer than 7 characters below 1000 GiB: it fits a
// fixed-width column.
func Bytes(n int) string {
	if n < 1<<10 {
		return fmt.Sprintf("%dB", n)
	}
	v, unit := float64(n)/(1<<10), "KiB"
	for _, u := range []string{"MiB", "GiB"} {
		if v < 1023.5 { // would not round to 1024 of this unit
			break
		}
		v, unit = v/(1<<10), u
	}
	if v < 99.95 {
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.0f%s", v, unit)
}

// Count renders a count with its noun, plural with an s when it is not
// one: "1 gateway", "2 gateways", "0 services".
func Count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
