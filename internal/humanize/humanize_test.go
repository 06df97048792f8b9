package humanize

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int]string{
		0: "0B", 1023: "1023B", 1 << 10: "1.0KiB", 2048: "2.0KiB", 81234: "79.3KiB", 102348: "99.9KiB", 102349: "100KiB",
		1<<20 - 1: "1.0MiB", 1<<20 - 600: "1023KiB", 1 << 20: "1.0MiB", 3 << 29: "1.5GiB", 5 << 40: "5120GiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
		if n < 1000<<30 && len(Bytes(n)) > 7 {
			t.Errorf("Bytes(%d) = %q is longer than 7", n, Bytes(n))
		}
	}
}
