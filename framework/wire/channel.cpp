#include "wire/channel.hpp"

#include <event2/buffer.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/progress.hpp"

namespace pmixpp::wire {

std::shared_ptr<Channel> Channel::open(std::unique_ptr<mca::ptl::Connection> connection,
                                       FrameHandler on_frame, CloseHandler on_close) {
    auto &engine = runtime::ProgressEngine::instance();
    std::shared_ptr<Channel> ch(new Channel);
    ch->connection_ = std::move(connection);
    // Kernel credentials came with the connection only for a peer on this host.
    ch->placement_ =
        ch->connection_->peer_credentials() ? PeerPlacement::local : PeerPlacement::maybe_remote;
    ch->on_frame_ = std::move(on_frame);
    ch->on_close_ = std::move(on_close);
    const int fd = ch->connection_->fd();
    ch->fd_ = fd;
    // Reads and the direct writes must never block the progress thread.
    if (evutil_make_socket_nonblocking(fd) != 0) return nullptr;
    ch->bev_ = bufferevent_socket_new(engine.base(), fd, 0);
    if (ch->bev_ == nullptr) return nullptr;
    // The bufferevent only writes what the socket did not take at once; the
    // channel reads the socket itself (on_readable).
    bufferevent_setcb(ch->bev_, nullptr, &Channel::on_write, &Channel::on_event, ch.get());
    bufferevent_enable(ch->bev_, EV_WRITE);
    ch->read_ev_ =
        event_new(engine.base(), fd, EV_READ | EV_PERSIST, &Channel::on_readable, ch.get());
    if (ch->read_ev_ == nullptr || event_add(ch->read_ev_, nullptr) != 0) {
        bufferevent_free(ch->bev_);
        ch->bev_ = nullptr;
        return nullptr;
    }
    return ch;
}

Channel::~Channel() {
    stop_reading();
    if (bev_ != nullptr) bufferevent_free(bev_);
}

void Channel::stop_reading() {
    if (read_ev_ == nullptr) return;
    event_free(read_ev_);
    read_ev_ = nullptr;
}

SharedFrame::SharedFrame(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                         std::span<const std::uint8_t> body)
    : command_(command), tag_(tag), flags_(flags), bytes_(kFrameHeaderSize + body.size()) {
    FrameHeader h;
    h.flags = static_cast<std::uint8_t>(flags & ~kFlagCompressed);
    h.command = command;
    h.tag = tag;
    h.length = static_cast<std::uint32_t>(body.size());
    encode_header(h, bytes_.data());
    if (!body.empty()) std::memcpy(bytes_.data() + kFrameHeaderSize, body.data(), body.size());
}

bool Channel::send(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                   std::span<const std::uint8_t> body) {
    std::lock_guard lock(write_mutex_);
    if (bev_ == nullptr || closing_after_flush_) return false;
    queue_spill();
    std::uint8_t header[kFrameHeaderSize];
    std::vector<std::uint8_t> packed;
    std::span<const std::uint8_t> payload;
    std::string reason;
    if (!prepare_frame(command, tag, flags, body, FrameLimits::process_wide(), placement_, header,
                       packed, payload, reason)) {
        return false;
    }
    return send_locked(header, payload);
}

bool Channel::send(const SharedFrame &frame) {
    const FrameLimits &limits = FrameLimits::process_wide();
    const auto body = frame.body();
    // What prepare_frame() would compress, or refuse, goes through it.
    if (body.size() > limits.max_frame ||
        (placement_ == PeerPlacement::maybe_remote && limits.compress_threshold > 0 &&
         body.size() > limits.compress_threshold)) {
        return send(frame.command(), frame.tag(), frame.flags(), body);
    }
    std::lock_guard lock(write_mutex_);
    if (bev_ == nullptr || closing_after_flush_) return false;
    queue_spill();
    return send_locked(frame.header(), body);
}

bool Channel::send_locked(const std::uint8_t *header, std::span<const std::uint8_t> payload) {
    // Nothing queued before it: write now, from the caller's buffers. That
    // saves the trip through the loop (epoll_ctl to watch for writability,
    // epoll_wait, writev, epoll_ctl to stop watching) and the copy into the
    // output buffer, and the peer can start reading while we go on (a server
    // sending one event to many clients). Whatever the socket does not take
    // now is queued as before, in order.
    // queued_ false means the output buffer is empty (it is set whenever
    // bytes are queued and cleared only once on_write found it drained): no
    // look at the buffer (a lock and an unlock of it) per send.
    std::size_t sent = 0;
    if (!queued_) {
        sent = write_now(header, payload);
        if (sent == kFrameHeaderSize + payload.size()) return true;
    }
    if (sent < kFrameHeaderSize &&
        bufferevent_write(bev_, header + sent, kFrameHeaderSize - sent) != 0) {
        return false;
    }
    const std::size_t body_sent = sent > kFrameHeaderSize ? sent - kFrameHeaderSize : 0;
    const bool ok =
        body_sent == payload.size() ||
        bufferevent_write(bev_, payload.data() + body_sent, payload.size() - body_sent) == 0;
    queued_ = evbuffer_get_length(bufferevent_get_output(bev_)) > 0;
    return ok;
}

bool Channel::send_from_any_thread(std::uint16_t command, std::uint32_t tag,
                                   std::span<const std::uint8_t> body) {
    std::lock_guard lock(write_mutex_);
    // queued_ is cleared only once the progress thread has written out the
    // whole output buffer (on_write), so a direct write never overtakes it.
    if (bev_ == nullptr || closing_after_flush_ || queued_ || !spill_.empty()) return false;
    std::uint8_t header[kFrameHeaderSize];
    std::vector<std::uint8_t> packed;
    std::span<const std::uint8_t> payload;
    std::string reason;
    if (!prepare_frame(command, tag, 0, body, FrameLimits::process_wide(), placement_, header,
                       packed, payload, reason)) {
        return false;
    }
    const std::size_t sent = write_now(header, payload);
    if (sent == 0) return false;
    const std::size_t total = kFrameHeaderSize + payload.size();
    if (sent == total) return true;
    // The socket took part of it: the rest goes out through the loop before
    // anything else (send() queues spill_ first).
    if (sent < kFrameHeaderSize) spill_.assign(header + sent, header + kFrameHeaderSize);
    const std::size_t body_sent = sent > kFrameHeaderSize ? sent - kFrameHeaderSize : 0;
    spill_.insert(spill_.end(), payload.begin() + static_cast<std::ptrdiff_t>(body_sent),
                  payload.end());
    runtime::ProgressEngine::instance().post([self = shared_from_this()] {
        std::lock_guard relock(self->write_mutex_);
        self->queue_spill();
    });
    return true;
}

void Channel::queue_spill() {
    if (spill_.empty() || bev_ == nullptr) return;
    // On failure (no memory) the stream is broken either way: closing is
    // the progress thread's, on the next event.
    bufferevent_write(bev_, spill_.data(), spill_.size());
    spill_.clear();
    queued_ = true;
}

std::size_t Channel::write_now(const std::uint8_t *header, std::span<const std::uint8_t> payload) {
    iovec iov[2];
    iov[0].iov_base = const_cast<std::uint8_t *>(header);
    iov[0].iov_len = kFrameHeaderSize;
    iov[1].iov_base = const_cast<std::uint8_t *>(payload.data());
    iov[1].iov_len = payload.size();
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = payload.empty() ? 1 : 2;
    if (payload.data() == header + kFrameHeaderSize) {
        // One buffer (a SharedFrame): one piece for the kernel to copy.
        iov[0].iov_len += payload.size();
        msg.msg_iovlen = 1;
    }
    // Never blocks and never raises SIGPIPE; any error (EAGAIN, a closed peer,
    // a descriptor that is not a socket) leaves the frame to the bufferevent,
    // which reports real errors through on_event as before.
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
}

void Channel::close(const std::string &reason, CloseCause cause) {
    {
        std::lock_guard lock(write_mutex_);
        if (bev_ == nullptr) return;
        cause_ = cause;
        stop_reading();
        bufferevent_free(bev_);
        bev_ = nullptr;
        spill_.clear();
    }
    // The owner may drop its last reference in the handler: keep us alive
    // until it returns.
    auto self = shared_from_this();
    runtime::ProgressEngine::instance().post([self, reason] {
        if (self->on_close_) {
            auto handler = std::move(self->on_close_);
            self->on_close_ = nullptr;
            self->on_frame_ = nullptr;
            handler(*self, reason);
        }
    });
}

void Channel::close_after_flush(const std::string &reason, CloseCause cause) {
    std::unique_lock lock(write_mutex_);
    if (bev_ == nullptr) return;
    queue_spill();
    if (evbuffer_get_length(bufferevent_get_output(bev_)) == 0) {
        lock.unlock();
        close(reason, cause);
        return;
    }
    closing_after_flush_ = true;
    pending_reason_ = reason;
    pending_cause_ = cause;
    stop_reading();
}

void Channel::on_write(bufferevent *, void *arg) {
    auto *ch = static_cast<Channel *>(arg);
    {
        std::lock_guard lock(ch->write_mutex_);
        if (ch->bev_ != nullptr)
            ch->queued_ = evbuffer_get_length(bufferevent_get_output(ch->bev_)) > 0;
    }
    if (ch->closing_after_flush_) ch->close(ch->pending_reason_, ch->pending_cause_);
}

void Channel::on_event(bufferevent *, short what, void *arg) {
    auto *ch = static_cast<Channel *>(arg);
    if (what & BEV_EVENT_EOF) {
        ch->close("peer closed the connection", CloseCause::peer_closed);
    } else if (what & BEV_EVENT_ERROR) {
        ch->close(
            std::string("socket error: ") + evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()),
            CloseCause::socket_error);
    }
}

void Channel::on_readable(evutil_socket_t, short, void *arg) {
    static_cast<Channel *>(arg)->read_frames();
}

namespace {
// What a channel's input buffer holds between frames; a larger frame grows
// it, and it goes back to this size once it is empty again.
constexpr std::size_t kInputBuffer = 16 * 1024;
// Kept across frames up to this size (a job's fence data comes every round).
constexpr std::size_t kInputKeep = 1024 * 1024;
}  // namespace

void Channel::reserve_input(std::size_t need) {
    const std::size_t have = in_end_ - in_begin_;
    if (in_size_ - in_begin_ >= need && in_end_ < in_size_) return;
    // At least one byte of room, whatever `need` says: a read into none
    // would return 0, which means end of file.
    const std::size_t want = std::max(need, have + 1);
    if (want <= in_size_) {
        if (have > 0) std::memmove(in_.get(), in_.get() + in_begin_, have);
    } else {
        const std::size_t size = std::max(want, in_size_ * 2);
        std::unique_ptr<std::uint8_t[]> grown(new std::uint8_t[size]);
        if (have > 0) std::memcpy(grown.get(), in_.get() + in_begin_, have);
        in_ = std::move(grown);
        in_size_ = size;
    }
    in_begin_ = 0;
    in_end_ = have;
}

void Channel::post_frame(Frame &&frame) {
    inbox_.push_back(std::move(frame));
    if (inbox_posted_++ == 0) inbox_hold_ = shared_from_this();
    // One closure per frame, in the progress thread's one queue, so frames
    // keep their place among the other closures as before.
    if (!runtime::ProgressEngine::instance().post([this] { deliver_posted(); })) {
        // No loop any more: the frame goes, as its closure would have.
        inbox_.pop_back();
        if (--inbox_posted_ == 0) inbox_hold_.reset();
    }
}

void Channel::deliver_posted() {
    // Held for the call (the owner may drop its last reference in it).
    std::shared_ptr<Channel> self = inbox_hold_;
    if (--inbox_posted_ == 0) inbox_hold_.reset();
    Frame frame = std::move(inbox_[inbox_head_++]);
    if (inbox_head_ == inbox_.size()) {
        inbox_.clear();
        inbox_head_ = 0;
    }
    // Nobody but these closures holds the channel: its owner let it go.
    if (self.use_count() == 1 + (inbox_hold_ ? 1 : 0)) return;
    if (!is_open() || !on_frame_) return;
    on_frame_(*this, std::move(frame));
}

void Channel::read_frames() {
    const FrameLimits &limits = limits_;
    // The bytes the frame at in_begin_ needs in all (header first).
    std::size_t need = kFrameHeaderSize;
    for (;;) {
        if (read_ev_ == nullptr) return;  // closed (or closing after a flush)
        if (!in_) {
            in_.reset(new std::uint8_t[kInputBuffer]);
            in_size_ = kInputBuffer;
        }
        reserve_input(need);
        const std::size_t room = in_size_ - in_end_;
        const ssize_t n = ::read(fd_, in_.get() + in_end_, room);
        if (n == 0) {
            close("peer closed the connection", CloseCause::peer_closed);
            return;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            close(std::string("socket error: ") + evutil_socket_error_to_string(errno),
                  CloseCause::socket_error);
            return;
        }
        in_end_ += static_cast<std::size_t>(n);
        // Every complete frame, parsed where it lies.
        for (;;) {
            const std::size_t have = in_end_ - in_begin_;
            if (have < kFrameHeaderSize) {
                need = kFrameHeaderSize;
                break;
            }
            const std::uint8_t *at = in_.get() + in_begin_;
            const FrameHeader header = decode_header(at);
            if (std::string bad = check_header(header, limits); !bad.empty()) {
                close("malformed frame: " + bad, CloseCause::malformed);
                return;
            }
            need = kFrameHeaderSize + header.length;
            // Never buffer beyond one frame whose header was not checked.
            if (have < need) break;
            std::vector<std::uint8_t> payload(at + kFrameHeaderSize, at + need);
            in_begin_ += need;
            need = kFrameHeaderSize;
            Frame frame;
            std::string reason;
            if (!open_frame(header, std::move(payload), limits, frame, reason)) {
                close("malformed frame: " + reason, CloseCause::malformed);
                return;
            }
            post_frame(std::move(frame));
        }
        if (in_begin_ == in_end_) {
            in_begin_ = in_end_ = 0;
            if (in_size_ > kInputKeep) {
                in_.reset(new std::uint8_t[kInputBuffer]);
                in_size_ = kInputBuffer;
            }
        }
        // The socket gave less than there was room for: it is empty now (the
        // next read would only say EAGAIN). Otherwise read on.
        if (static_cast<std::size_t>(n) < room) return;
    }
}

}  // namespace pmixpp::wire
