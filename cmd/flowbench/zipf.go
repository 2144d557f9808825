package main

import "math"

// zipfTheta is the skew of the disaggregated phase's throughput runs: YCSB's default
// Zipfian constant (0.99), the access pattern of its workload F (read-modify-write).
const zipfTheta = 0.99

// zipfian draws ranks in [0, n) with P(rank r) proportional to 1/(r+1)^theta, from a
// uniform number, by the method of Gray et al., "Quickly generating billion-record
// synthetic databases" (SIGMOD 1994), which YCSB uses. Its keys scatter the ranks over
// [0, n) by a hash, as YCSB's "scrambled" Zipfian does, so that the popular keys are not
// neighbours.
type zipfian struct {
	n                   int64
	theta, alpha, zetaN float64
	eta, half           float64
}

// newZipfian precomputes the generator for n items (zeta(n) takes n steps).
func newZipfian(n int64, theta float64) *zipfian {
	z := &zipfian{n: n, theta: theta, alpha: 1 / (1 - theta), half: math.Pow(0.5, theta)}
	for i := int64(1); i <= n; i++ {
		z.zetaN += 1 / math.Pow(float64(i), theta)
	}
	zeta2 := 1 + z.half
	z.eta = (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/z.zetaN)
	return z
}

// rank returns the rank that the uniform number u in [0, 1) draws.
func (z *zipfian) rank(u float64) int64 {
	uz := u * z.zetaN
	switch {
	case uz < 1:
		return 0
	case uz < 1+z.half:
		return 1
	}
	r := int64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(r, z.n-1)
}

// key returns the key of event i: the rank drawn by i's own uniform number, scattered
// over [0, n). The same i always gives the same key, so a replayed source repeats itself.
func (z *zipfian) key(i int64) uint64 {
	u := float64(splitmix64(uint64(i))>>11) / (1 << 53)
	return splitmix64(uint64(z.rank(u))^0x5bd1e995) % uint64(z.n)
}

// splitmix64 is SplitMix64's output function: a fast, well-mixed hash of x.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}
