/// The Mersenne Twister (MT19937) seeded the way CPython's `random.seed(int)` seeds it.
///
/// httpbin's `/bytes/:n?seed=` and `/stream-bytes/:n?seed=` draw `random.randint(0, 255)` per byte,
/// so with this generator a seeded request returns byte for byte what real httpbin returns.
struct PythonRandom {
    private var state = [UInt32](repeating: 0, count: 624)
    private var index = 624

    /// Seeds like `random.seed(seed)`: the absolute value split into 32-bit words, least significant first.
    init(seed: Int) {
        var magnitude = seed.magnitude
        var key: [UInt32] = []
        repeat {
            key.append(UInt32(truncatingIfNeeded: magnitude))
            magnitude >>= 32
        } while magnitude > 0
        seedByArray(key)
    }

    /// Seeds from the system's random source, as an unseeded Python process does.
    init() {
        var generator = SystemRandomNumberGenerator()
        seedByArray((0..<4).map { _ in UInt32.random(in: .min ... .max, using: &generator) })
    }

    private mutating func seedByArray(_ key: [UInt32]) {
        state[0] = 19_650_218
        for position in 1..<624 {
            let previous = state[position - 1]
            state[position] = 1_812_433_253 &* (previous ^ (previous >> 30)) &+ UInt32(position)
        }
        var position = 1
        var keyIndex = 0
        for _ in 0..<max(624, key.count) {
            let previous = state[position - 1]
            state[position] =
                (state[position] ^ ((previous ^ (previous >> 30)) &* 1_664_525)) &+ key[keyIndex]
                &+ UInt32(keyIndex)
            position += 1
            keyIndex += 1
            if position >= 624 {
                state[0] = state[623]
                position = 1
            }
            if keyIndex >= key.count { keyIndex = 0 }
        }
        for _ in 0..<623 {
            let previous = state[position - 1]
            state[position] =
                (state[position] ^ ((previous ^ (previous >> 30)) &* 1_566_083_941))
                &- UInt32(position)
            position += 1
            if position >= 624 {
                state[0] = state[623]
                position = 1
            }
        }
        state[0] = 0x8000_0000
        index = 624
    }

    private mutating func twist() {
        for position in 0..<624 {
            let bits = (state[position] & 0x8000_0000) | (state[(position + 1) % 624] & 0x7FFF_FFFF)
            var next = state[(position + 397) % 624] ^ (bits >> 1)
            if bits & 1 != 0 { next ^= 0x9908_B0DF }
            state[position] = next
        }
        index = 0
    }

    /// The next 32-bit output, tempered.
    mutating func nextUInt32() -> UInt32 {
        if index >= 624 { twist() }
        var value = state[index]
        index += 1
        value ^= value >> 11
        value ^= (value << 7) & 0x9D2C_5680
        value ^= (value << 15) & 0xEFC6_0000
        value ^= value >> 18
        return value
    }

    /// `random.randint(0, 255)`: rejection sampling on the top 9 bits, as CPython's `_randbelow` does.
    mutating func nextByte() -> UInt8 {
        while true {
            let candidate = nextUInt32() >> 23
            if candidate < 256 { return UInt8(candidate) }
        }
    }
}
