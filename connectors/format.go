package connectors

import "strconv"

func formatCost(usd float64) string { return strconv.FormatFloat(usd, 'f', 4, 64) }

func itoa(n int) string { return strconv.Itoa(n) }
