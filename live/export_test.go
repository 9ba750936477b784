package live

// Live tells whether the stream is past its history: a test waits for it
// rather than for its reads to stop, which on a busy machine may only pause.
func (s *Subscription) Live() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}
