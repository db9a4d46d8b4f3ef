// Errors as values at module boundaries: Status for operations, Expected<T> for results.
#pragma once

#include <cassert>
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace jetagent {

// What kind of failure a Status carries. The command line maps the kinds to exit codes: the first
// three are the user's to fix (exit 2), the others are failures at run time (exit 1).
enum class ErrorKind {
    None,
    InvalidInput, // a bad config value, a malformed or unsupported file, a bad URI
    NotFound, // a named file, directory or device does not exist
    Unsupported, // valid, but this build or machine cannot do it (no CUDA, unknown backend)
    Io, // reading or writing failed while running
    Runtime, // anything else that failed while running
};

class [[nodiscard]] Status {
public:
    Status() = default;

    static Status error(ErrorKind kind, std::string message)
    {
        assert(kind != ErrorKind::None);
        Status s;
        s.kind_ = kind;
        s.message_ = std::move(message);
        return s;
    }
    static Status invalid(std::string message)
    {
        return error(ErrorKind::InvalidInput, std::move(message));
    }
    static Status notFound(std::string message)
    {
        return error(ErrorKind::NotFound, std::move(message));
    }
    static Status unsupported(std::string message)
    {
        return error(ErrorKind::Unsupported, std::move(message));
    }
    static Status io(std::string message) { return error(ErrorKind::Io, std::move(message)); }
    static Status runtime(std::string message)
    {
        return error(ErrorKind::Runtime, std::move(message));
    }

    bool ok() const { return kind_ == ErrorKind::None; }
    explicit operator bool() const { return ok(); }
    ErrorKind kind() const { return kind_; }
    const std::string& message() const { return message_; }

    // True when the user can fix the failure by changing their input (config, files, URIs).
    bool isUsageError() const
    {
        return kind_ == ErrorKind::InvalidInput || kind_ == ErrorKind::NotFound ||
            kind_ == ErrorKind::Unsupported;
    }

    // The same error with context put in front ("loading model x.onnx: " + message).
    Status withContext(const std::string& context) const
    {
        if (ok())
            return *this;
        return error(kind_, context + ": " + message_);
    }

private:
    ErrorKind kind_ = ErrorKind::None;
    std::string message_;
};

// The text of an errno value; unlike strerror(), safe from any thread.
inline std::string errnoText(int error)
{
    return std::generic_category().message(error);
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Expected {
public:
    Expected(T value) : v_(std::move(value)) { }
    Expected(Status error) : v_(std::move(error)) { assert(!std::get<Status>(v_).ok()); }

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() &
    {
        assert(ok());
        return std::get<T>(v_);
    }
    const T& value() const&
    {
        assert(ok());
        return std::get<T>(v_);
    }
    T&& value() &&
    {
        assert(ok());
        return std::get<T>(std::move(v_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    // The error; an ok Status when a value is held.
    Status status() const { return ok() ? Status() : std::get<Status>(v_); }

private:
    std::variant<T, Status> v_;
};

} // namespace jetagent
