// SHA-256 (FIPS 180-4) over bytes, for plan fingerprints and journal checksums; no outside package needed.
// One shot over a buffer: whole blocks are read in place (no copy of the message, no per-byte padding), fast
// enough to checksum every journal record.

package enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The eight working words between blocks.
    private struct State {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)

        /// Compresses `blocks` whole 64-byte blocks read straight from `p` (big-endian words, unaligned loads).
        mutating func compress(_ p: UnsafeRawPointer, blocks: Int, w: UnsafeMutablePointer<UInt32>, k: UnsafePointer<UInt32>) {
            var base = p
            for _ in 0..<blocks {
                for i in 0..<16 { w[i] = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)) }
                for i in 16..<64 {
                    let x = w[i - 15], y = w[i - 2]
                    let s0 = SHA256.rotr(x, 7) ^ SHA256.rotr(x, 18) ^ (x >> 3)
                    let s1 = SHA256.rotr(y, 17) ^ SHA256.rotr(y, 19) ^ (y >> 10)
                    w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, hh) = h
                // Eight rounds per pass with the roles rotated in the arguments: no moving of the eight words
                // between rounds.
                var i = 0
                while i < 64 {
                    Self.round(a, b, c, &d, e, f, g, &hh, k[i] &+ w[i])
                    Self.round(hh, a, b, &c, d, e, f, &g, k[i + 1] &+ w[i + 1])
                    Self.round(g, hh, a, &b, c, d, e, &f, k[i + 2] &+ w[i + 2])
                    Self.round(f, g, hh, &a, b, c, d, &e, k[i + 3] &+ w[i + 3])
                    Self.round(e, f, g, &hh, a, b, c, &d, k[i + 4] &+ w[i + 4])
                    Self.round(d, e, f, &g, hh, a, b, &c, k[i + 5] &+ w[i + 5])
                    Self.round(c, d, e, &f, g, hh, a, &b, k[i + 6] &+ w[i + 6])
                    Self.round(b, c, d, &e, f, g, hh, &a, k[i + 7] &+ w[i + 7])
                    i += 8
                }
                h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
                base += 64
            }
        }

        /// One round: `d` gains T1 (it becomes the next e), `h` becomes T1 + T2 (the next a).
        @inline(__always)
        static func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                          _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ kw: UInt32) {
            let t1 = h &+ (SHA256.rotr(e, 6) ^ SHA256.rotr(e, 11) ^ SHA256.rotr(e, 25)) &+ (g ^ (e & (f ^ g))) &+ kw
            d = d &+ t1
            h = t1 &+ (SHA256.rotr(a, 2) ^ SHA256.rotr(a, 13) ^ SHA256.rotr(a, 22)) &+ ((a & b) | (c & (a | b)))
        }

        /// Hashes a whole message: its whole blocks in place, then the last partial block and the padding
        /// (0x80, zeros, the bit length) in a 128-byte scratch block. No copy of the message, no per-byte appends.
        /// `length`: the whole message's length when `message` is only its last part (``Hasher``).
        mutating func hash(_ message: UnsafeRawBufferPointer, length: Int? = nil) {
            let count = message.count
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                SHA256.k.withUnsafeBufferPointer { k in
                    let whole = count / 64
                    if whole > 0, let base = message.baseAddress {
                        compress(base, blocks: whole, w: w.baseAddress!, k: k.baseAddress!)
                    }
                    withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
                        tail.initializeMemory(as: UInt8.self, repeating: 0)
                        let rest = count - whole * 64
                        if rest > 0 { tail.baseAddress!.copyMemory(from: message.baseAddress! + whole * 64, byteCount: rest) }
                        tail[rest] = 0x80
                        let blocks = rest < 56 ? 1 : 2
                        let bits = UInt64(length ?? count) &* 8
                        tail.storeBytes(of: bits.bigEndian, toByteOffset: blocks * 64 - 8, as: UInt64.self)
                        compress(UnsafeRawPointer(tail.baseAddress!), blocks: blocks, w: w.baseAddress!, k: k.baseAddress!)
                    }
                }
            }
        }

        /// Word `i` of the digest.
        func word(_ i: Int) -> UInt32 {
            switch i {
            case 0: h.0
            case 1: h.1
            case 2: h.2
            case 3: h.3
            case 4: h.4
            case 5: h.5
            case 6: h.6
            default: h.7
            }
        }
    }

    /// SHA-256 over a message given in pieces (a plan file read in chunks, never whole in memory): the same
    /// digest as ``hex(_:)`` of the pieces joined. Whole blocks are compressed as they come; less than one
    /// block is held between pieces.
    package struct Hasher {
        private var state = State()
        private var pending: [UInt8] = []
        private var length = 0

        package init() {}

        package mutating func update(_ piece: UnsafeRawBufferPointer) {
            guard piece.count > 0, let base = piece.baseAddress else { return }
            length += piece.count
            var offset = 0
            if !pending.isEmpty {
                let take = min(64 - pending.count, piece.count)
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece[0..<take]))
                offset = take
                guard pending.count == 64 else { return }
                compress(pending)
                pending.removeAll(keepingCapacity: true)
            }
            let whole = (piece.count - offset) / 64
            if whole > 0 { compress(UnsafeRawPointer(base + offset), blocks: whole) }
            offset += whole * 64
            if offset < piece.count { pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece[offset...])) }
        }

        /// The digest of everything given, as 64 lowercase hex digits.
        package func hex() -> String {
            var last = state
            pending.withUnsafeBytes { last.hash($0, length: length) }
            let digits: StaticString = "0123456789abcdef"
            var out: [UInt8] = []
            out.reserveCapacity(64)
            for n in 0..<64 { out.append(digits.utf8Start[Int((last.word(n / 8) >> UInt32(28 - 4 * (n % 8))) & 0xF)]) }
            return String(decoding: out, as: UTF8.self)
        }

        private mutating func compress(_ block: [UInt8]) {
            block.withUnsafeBytes { compress($0.baseAddress!, blocks: 1) }
        }

        private mutating func compress(_ p: UnsafeRawPointer, blocks: Int) {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                SHA256.k.withUnsafeBufferPointer { k in state.compress(p, blocks: blocks, w: w.baseAddress!, k: k.baseAddress!) }
            }
        }
    }

    private static func state(of bytes: some Collection<UInt8>) -> State {
        var state = State()
        if bytes.withContiguousStorageIfAvailable({ state.hash(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { state.hash($0) }
        }
        return state
    }

    /// The 32-byte digest of `bytes`.
    package static func digest(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let state = state(of: bytes)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for i in 0..<8 {
            let word = state.word(i)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return out
    }

    /// Appends the first `digits` lowercase hex digits of the digest of `bytes` to `out` (the journal's checksum).
    package static func appendHexPrefix(of bytes: some Collection<UInt8>, digits: Int, to out: inout [UInt8]) {
        let state = state(of: bytes)
        let hex: StaticString = "0123456789abcdef"
        for n in 0..<min(digits, 64) {
            let nibble = (state.word(n / 8) >> UInt32(28 - 4 * (n % 8))) & 0xF
            out.append(hex.utf8Start[Int(nibble)])
        }
    }

    /// The digest of `bytes` as 64 lowercase hex digits, as `sha256sum` prints it.
    package static func hex(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        appendHexPrefix(of: bytes, digits: 64, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
}
