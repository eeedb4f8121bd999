package views

import (
	"math"
	"testing"
	"time"
)

func TestMoney(t *testing.T) {
	tests := []struct {
		micros int64
		want   string
	}{
		{0, "$0.00"},
		{1, "$0.000001"},
		{1_500, "$0.0015"},
		{10_000, "$0.01"},
		{12_340_000, "$12.34"},
		{12_345_678, "$12.345678"},
		{250_000_000, "$250.00"},
		{1_234_500_000, "$1,234.50"},
		{1_000_000_000_000, "$1,000,000.00"},
		{-2_500_000, "-$2.50"},
		{math.MaxInt64, "$9,223,372,036,854.775807"},
		{math.MinInt64, "-$9,223,372,036,854.775808"},
	}
	for _, tt := range tests {
		if got := Money(tt.micros); got != tt.want {
			t.Errorf("Money(%d) = %q, want %q", tt.micros, got, tt.want)
		}
	}
}

func TestMoneyInput(t *testing.T) {
	tests := []struct {
		micros int64
		want   string
	}{
		{0, "0.00"},
		{250_000_000, "250.00"},
		{1_234_500_000, "1234.50"},
		{1_500, "0.0015"},
		{-1_000_000, "-1.00"},
	}
	for _, tt := range tests {
		if got := MoneyInput(tt.micros); got != tt.want {
			t.Errorf("MoneyInput(%d) = %q, want %q", tt.micros, got, tt.want)
		}
	}
}

func TestLatency(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ms"},
		{850 * time.Millisecond, "850 ms"},
		{1250 * time.Millisecond, "1.25 s"},
		{time.Second + 400*time.Microsecond, "1 s"},
		{125 * time.Second, "2m5s"},
		{-time.Second, "—"},
	}
	for _, tt := range tests {
		if got := Latency(tt.d); got != tt.want {
			t.Errorf("Latency(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
