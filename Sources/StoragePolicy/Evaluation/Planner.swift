// Plans a policy against a root: one walk, every rule evaluated in that pass. Changes nothing on disk.
// (Stub until the evaluator lands: the signature is the contract other parts build on.)

public struct PlanOptions: Sendable {
    /// The time ages are measured against, nanoseconds since the epoch; nil means now.
    public var now: Int64?
    public init(now: Int64? = nil) { self.now = now }
}

public struct Planner: Sendable {
    public let policy: Policy
    public let root: String
    public let options: PlanOptions

    public init(policy: Policy, root: String, options: PlanOptions = PlanOptions()) {
        self.policy = policy; self.root = root; self.options = options
    }

    /// Walks the root and returns the plan. `progress` is called now and then with entries seen so far
    /// and the directory being read.
    public func plan(progress: (@Sendable (Int, RelativePath) -> Void)? = nil) throws -> Plan {
        throw FileSystemError("plan", path: .root, errno: .notSupported)
    }
}
