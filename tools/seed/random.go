package seed

// Hash domains: what a value is for, so unrelated values never correlate.
const (
	tagTopicCreated = iota + 1
	tagTimestamp
	tagMessage
	tagGroup
	tagPayload
	tagRunningHash
	tagTxHash
	tagFailed
	tagAccount
	tagToken
	tagTopic
	tagFee
	tagSchedule
	tagScheduleKey
	tagSignature
)

// mix is splitmix64's finaliser: small, fast and fixed forever, unlike
// math/rand's sources, so the data set never changes under a new Go.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

type gen struct{ seed uint64 }

func newGen(seed int64) gen { return gen{seed: mix(uint64(seed) ^ 0x6d6972726f72716c)} }

// hash is the deterministic value for (tag, a, b).
func (g gen) hash(tag, a, b uint64) uint64 {
	return mix(mix(mix(g.seed^tag)^a) ^ b)
}

func (g gen) rng(tag, a, b uint64) rng { return rng(g.hash(tag, a, b)) }

// eventTimestamp is the instant of event seq (1-based) of a stream: a random
// instant of the stream's class (cell-aligned offset plus a jitter within
// its 1 ms slot) in the seq-th period after base, so events arrive
// irregularly, yet in order and never at another stream's instant.
func (g gen) eventTimestamp(base, period, cell int64, stream int, seq int64) int64 {
	h := g.hash(tagTimestamp, uint64(stream), uint64(seq))
	return base + (seq-1)*period + int64(h>>24%uint64(period/cell))*cell + int64(h%uint64(slot))
}

// rng is a splitmix64 stream.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	return mix(uint64(*r))
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// appendBytes appends n random bytes.
func (r *rng) appendBytes(b []byte, n int) []byte {
	for n > 0 {
		v := r.next()
		for j := 0; j < 8 && n > 0; j++ {
			b = append(b, byte(v))
			v >>= 8
			n--
		}
	}
	return b
}
