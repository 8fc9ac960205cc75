// A command's options as a struct of its own: each stored property is tied to the option or argument that
// fills it by a key path, so a command reads `options.root`, which the compiler checks, instead of looking a
// string key up (`value("rot")` compiled and was nil). The same list of fields is the command's spec: help,
// the man page, completions and the parser are generated from it, so they cannot drift from the struct.

/// The options of one command: a struct with a default value for every property, and the fields that say
/// which option or argument fills which property.
protocol ParsableOptions {
    init()
    /// The command's options, in the order help lists them.
    static var options: [OptionField<Self>] { get }
    /// The command's positional arguments, in order; a repeating one takes every argument left.
    static var arguments: [ArgumentField<Self>] { get }
}

extension ParsableOptions {
    static var arguments: [ArgumentField<Self>] { [] }

    /// Filled from what the parser accepted. Nothing is checked here (the parser has checked allowed values,
    /// counts and repeats against the same fields), so this cannot fail.
    init(_ parsed: ParsedArguments) {
        self.init()
        for field in Self.options { field.fill(&self, parsed) }
        var rest = parsed.positionals[...]
        for field in Self.arguments { field.fill(&self, &rest) }
    }

    /// The value of an option the command cannot run without, or the usage error every command gives for it
    /// ("Missing expected option '--root <dir>'", exit 64).
    func required(_ keyPath: WritableKeyPath<Self, String?>, command: String) throws(UsageError) -> String {
        guard let value = self[keyPath: keyPath] else {
            let option = Self.option(keyPath)
            throw UsageError(message: "Missing expected option '--\(option.long) <\(option.valueName!)>'", command: command)
        }
        return value
    }

    /// An optional option's value parsed by `parse`: nil when it is not given, the usage error every command
    /// gives ("The value 'x' is invalid for '--last <N>' (accepted)", exit 64) when `parse` refuses it.
    func parsed<T>(_ keyPath: WritableKeyPath<Self, String?>, accepted: String, command: String,
                   _ parse: (String) -> T?) throws(UsageError) -> T? {
        guard let text = self[keyPath: keyPath] else { return nil }
        guard let parsed = parse(text) else {
            let option = Self.option(keyPath)
            throw UsageError(message: "The value '\(text)' is invalid for '--\(option.long) <\(option.valueName!)>' (\(accepted))", command: command)
        }
        return parsed
    }

    /// The spec of the option that fills `keyPath`. A key path no field names is a programming error (a
    /// property left out of `options`), caught by the first test that reaches it.
    static func option(_ keyPath: PartialKeyPath<Self>) -> OptionSpec {
        guard let field = options.first(where: { $0.keyPath == keyPath }) else {
            preconditionFailure("\(Self.self): no option fills \(keyPath)")
        }
        return field.spec
    }
}

/// A command without options or arguments.
struct NoOptions: ParsableOptions {
    static var options: [OptionField<Self>] { [] }
}

/// One option and the property it fills. The property's type says how: a flag sets a `Bool`; an option
/// with a value sets a `String?` (the value given, else nil), a `String` (the value given, else its default)
/// or, repeating, a `[String]` (every value given, in order).
struct OptionField<Options> {
    enum Target {
        case flag(WritableKeyPath<Options, Bool>)
        case value(WritableKeyPath<Options, String?>)
        case defaulted(WritableKeyPath<Options, String>)
        case list(WritableKeyPath<Options, [String]>)
    }

    let spec: OptionSpec
    let target: Target

    var keyPath: PartialKeyPath<Options> {
        switch target {
        case .flag(let k): k
        case .value(let k): k
        case .defaulted(let k): k
        case .list(let k): k
        }
    }

    func fill(_ options: inout Options, _ parsed: ParsedArguments) {
        switch target {
        case .flag(let k): options[keyPath: k] = parsed.flags.contains(spec.long)
        case .value(let k): options[keyPath: k] = parsed.values[spec.long]?.last
        case .defaulted(let k): options[keyPath: k] = parsed.values[spec.long]?.last ?? spec.defaultValue!
        case .list(let k): options[keyPath: k] = parsed.values[spec.long] ?? []
        }
    }

    static func flag(_ keyPath: WritableKeyPath<Options, Bool>, _ long: String, short: Character? = nil,
                     help: String) -> Self {
        shared(keyPath, .flag(long, short: short, help: help))
    }

    static func option(_ keyPath: WritableKeyPath<Options, String?>, _ long: String, short: Character? = nil,
                       value: String, help: String, values: [String]? = nil, completion: Completion = .none) -> Self {
        shared(keyPath, .option(long, short: short, value: value, help: help, values: values, completion: completion))
    }

    static func option(_ keyPath: WritableKeyPath<Options, String>, _ long: String, short: Character? = nil,
                       value: String, help: String, default defaultValue: String, values: [String]? = nil,
                       completion: Completion = .none) -> Self {
        shared(keyPath, .option(long, short: short, value: value, help: help, default: defaultValue, values: values,
                                completion: completion))
    }

    static func option(_ keyPath: WritableKeyPath<Options, [String]>, _ long: String, short: Character? = nil,
                       value: String, help: String, values: [String]? = nil, completion: Completion = .none) -> Self {
        shared(keyPath, .option(long, short: short, value: value, help: help, values: values, repeating: true,
                                completion: completion))
    }

    /// An option several commands declare alike (`--quiet`, `--state-dir`, `--cache-dir`), filling this
    /// command's property. The preconditions hold a spec to the property type that can carry it.
    static func shared(_ keyPath: WritableKeyPath<Options, Bool>, _ spec: OptionSpec) -> Self {
        precondition(spec.isFlag, "--\(spec.long) takes a value: it fills a String, not a Bool")
        return Self(spec: spec, target: .flag(keyPath))
    }

    static func shared(_ keyPath: WritableKeyPath<Options, String?>, _ spec: OptionSpec) -> Self {
        precondition(!spec.isFlag && !spec.isRepeating && spec.defaultValue == nil,
                     "--\(spec.long) is a flag, repeats or has a default: it does not fill a String?")
        return Self(spec: spec, target: .value(keyPath))
    }

    static func shared(_ keyPath: WritableKeyPath<Options, String>, _ spec: OptionSpec) -> Self {
        precondition(!spec.isFlag && !spec.isRepeating && spec.defaultValue != nil,
                     "--\(spec.long) has no default: it fills a String?, not a String")
        return Self(spec: spec, target: .defaulted(keyPath))
    }

    static func shared(_ keyPath: WritableKeyPath<Options, [String]>, _ spec: OptionSpec) -> Self {
        precondition(!spec.isFlag && spec.isRepeating, "--\(spec.long) does not repeat: it fills a String?")
        return Self(spec: spec, target: .list(keyPath))
    }
}

/// One positional argument and the property it fills: a required one a `String` (the parser has made sure
/// it is there), an optional one a `String?`, a repeating one a `[String]` (every argument left).
struct ArgumentField<Options> {
    enum Target {
        case one(WritableKeyPath<Options, String>)
        case optional(WritableKeyPath<Options, String?>)
        case rest(WritableKeyPath<Options, [String]>)
    }

    let spec: ArgumentSpec
    let target: Target

    func fill(_ options: inout Options, _ rest: inout ArraySlice<String>) {
        switch target {
        case .one(let k): if let first = rest.popFirst() { options[keyPath: k] = first }
        case .optional(let k): options[keyPath: k] = rest.popFirst()
        case .rest(let k):
            options[keyPath: k] = Array(rest)
            rest = []
        }
    }

    static func argument(_ keyPath: WritableKeyPath<Options, String>, _ name: String, help: String,
                         completion: Completion = .file) -> Self {
        Self(spec: ArgumentSpec(name: name, help: help, completion: completion), target: .one(keyPath))
    }

    static func argument(_ keyPath: WritableKeyPath<Options, String?>, _ name: String, help: String,
                         completion: Completion = .file) -> Self {
        Self(spec: ArgumentSpec(name: name, help: help, isOptional: true, completion: completion), target: .optional(keyPath))
    }

    /// Every argument left; `optional` when none at all is a valid command line.
    static func argument(_ keyPath: WritableKeyPath<Options, [String]>, _ name: String, help: String,
                         optional: Bool = false, completion: Completion = .file) -> Self {
        Self(spec: ArgumentSpec(name: name, help: help, isOptional: optional, isRepeating: true, completion: completion),
             target: .rest(keyPath))
    }
}
