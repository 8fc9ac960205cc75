// A saved plan handed to apply with another policy file or root than it was made with, as a value: which of
// the two differs, what the plan recorded and what the caller named. The description is the sentence
// `policyctl apply PLANFILE` prints, byte for byte.

/// A saved plan was made with another policy file, or for another root, than the apply names.
public struct PlanMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which of the two the plan disagrees on.
    public enum Subject: Sendable, Hashable {
        /// The policy file: the plan recorded `recorded` ("(none)" when it recorded none).
        case policyFile
        /// The root directory.
        case root
    }

    public let subject: Subject
    /// What the plan recorded.
    public let recorded: String
    /// What the apply named.
    public let named: String

    package init(_ subject: Subject, recorded: String, named: String) {
        self.subject = subject; self.recorded = recorded; self.named = named
    }

    /// The problem and the fix.
    public var description: String {
        switch subject {
        case .policyFile: "the plan was made with the policy \(recorded), not \(named) that this apply names; plan again with it"
        case .root: "the plan was made for the root \(recorded), not \(named) that this apply names; plan again for it"
        }
    }
}
