package claude

// usage is a result line's token counts for the turn.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// input is every prompt token the turn sent, cached ones included (0 for
// a result without usage).
func (u *usage) input() int64 {
	if u == nil {
		return 0
	}
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// output is the tokens the model wrote in the turn.
func (u *usage) output() int64 {
	if u == nil {
		return 0
	}
	return u.OutputTokens
}
