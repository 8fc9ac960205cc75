// "Did you mean" for policy keys, values, options and subcommands: the closest candidate within a small
// edit distance. Never suggests something far away: a wrong hint is worse than none.

/// "Did you mean" suggestions for misspelt keys and values.
package enum Suggestion {
    /// The candidate closest to `word`, if it is within a third of the word's length (at least 1, at most 3 edits).
    package static func closest(to word: String, in candidates: [String]) -> String? {
        let w = Array(word.lowercased())
        let scored = candidates.map { ($0, distance(w, Array($0.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }),
              best.1 <= min(3, max(1, word.count / 3)) else { return nil }
        return best.0
    }

    /// Levenshtein distance over characters.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
