// One framed connection on the progress thread's event loop.
//
// A Channel owns a ptl Connection (the socket), a libevent read event on its
// descriptor and a bufferevent for what the socket does not take at once. It
// reads the socket itself, with one read(2) into its own buffer per wake-up
// (no bufferevent on the read side: that cost an ioctl(FIONREAD) and several
// buffer copies and locks per frame, bench/README.md "Notify against the
// wake-up floor"), parses the frames (frame.hpp) in that buffer, checks every
// header against the limits before buffering its body, inflates compressed
// bodies and hands each complete Frame to its FrameHandler as a posted closure
// (outside libevent dispatch, see runtime/progress.hpp). A malformed frame,
// EOF or a socket error closes the channel: the CloseHandler runs exactly once
// with the reason, which the owner logs. The channel's owner keeps the
// shared_ptr; handlers capture weak pointers.
//
// Threads: everything, including destruction, on the progress thread.
#pragma once

#include <event2/bufferevent.h>
#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pmixpp/mca/ptl.hpp"
#include "wire/frame.hpp"

namespace pmixpp::wire {

// Why a channel closed, for its owner (Channel::close_cause()), so that no
// one compares reason strings; the reason stays the text for logs.
enum class CloseCause : std::uint8_t {
    local,         // the owner closed it (the default of close())
    peer_closed,   // end of file: the peer closed its end
    socket_error,  // the socket reported an error
    malformed,     // a frame the limits or the decoder refused
    refused,       // the owner refused the peer (a failed handshake)
};

// One frame built once and written to many channels (an event the server
// routes to every receiver, docs/events.md "Latency"): the header and the
// body in one buffer, so that each channel's send is one sendmsg of these
// bytes. A channel whose peer would get the body compressed (a remote peer,
// a body over wire_base_compress_threshold) sends it as send() would.
class SharedFrame {
  public:
    SharedFrame(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
                std::span<const std::uint8_t> body);
    std::uint16_t command() const noexcept { return command_; }
    std::uint32_t tag() const noexcept { return tag_; }
    std::uint8_t flags() const noexcept { return flags_; }
    const std::uint8_t *header() const noexcept { return bytes_.data(); }
    std::span<const std::uint8_t> body() const noexcept {
        return std::span<const std::uint8_t>(bytes_).subspan(kFrameHeaderSize);
    }

  private:
    std::uint16_t command_;
    std::uint32_t tag_;
    std::uint8_t flags_;
    std::vector<std::uint8_t> bytes_;  // header, then the body as given
};

class Channel : public std::enable_shared_from_this<Channel> {
  public:
    using FrameHandler = std::function<void(Channel &, Frame &&)>;
    using CloseHandler = std::function<void(Channel &, const std::string &reason)>;

    // Starts reading at once. Returns nullptr (and closes the connection) if
    // libevent refuses the descriptor.
    static std::shared_ptr<Channel> open(std::unique_ptr<mca::ptl::Connection> connection,
                                         FrameHandler on_frame, CloseHandler on_close);
    ~Channel();
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    // Queue one frame. False when the channel is closed or the body is over
    // the maximum frame size (then the channel stays open; the caller reports).
    bool send(std::uint16_t command, std::uint32_t tag, std::uint8_t flags,
              std::span<const std::uint8_t> body);
    // The same for a frame built once for many channels: no header or copy
    // per channel (the frame is compressed for this peer only if send() would).
    bool send(const SharedFrame &frame);
    bool reply(const Frame &request, std::span<const std::uint8_t> body) {
        return send(request.command, request.tag, kFlagReply, body);
    }
    // From any thread (the others are progress thread only): writes the frame
    // to the socket in the caller's thread when the channel is open and
    // nothing is queued, so that the caller does not wait for the progress
    // thread to wake (a notifier's event, docs/events.md). False when it
    // wrote nothing: the caller then sends through the progress thread. A
    // frame the socket took in part is finished by the progress thread, in
    // order, before any later frame.
    bool send_from_any_thread(std::uint16_t command, std::uint32_t tag,
                              std::span<const std::uint8_t> body);

    // Close now; the CloseHandler runs (posted) with `reason`. Idempotent:
    // the first close's cause and reason stay.
    void close(const std::string &reason, CloseCause cause = CloseCause::local);
    // Close once everything queued has been written.
    void close_after_flush(const std::string &reason, CloseCause cause = CloseCause::local);
    CloseCause close_cause() const noexcept { return cause_; }
    bool is_open() const noexcept { return bev_ != nullptr; }

    // The limits frames from the peer are checked against (frame.hpp):
    // FrameLimits::process_wide() until changed (a server holds an
    // unauthenticated peer to FrameLimits::before_handshake()).
    void set_receive_limits(const FrameLimits &limits) { limits_ = limits; }

    const mca::ptl::Connection &connection() const { return *connection_; }
    std::string describe_peer() const { return connection_->describe_peer(); }

    // Owner data (the server's peer record, ...).
    void *user = nullptr;

  private:
    Channel() = default;
    static void on_readable(evutil_socket_t fd, short what, void *arg);
    static void on_write(bufferevent *bev, void *arg);
    static void on_event(bufferevent *bev, short what, void *arg);
    void read_frames();
    // send(): the frame's header and (maybe compressed) body, under write_mutex_.
    bool send_locked(const std::uint8_t *header, std::span<const std::uint8_t> payload);
    // send(): writes what the socket takes at once; returns the bytes written.
    std::size_t write_now(const std::uint8_t *header, std::span<const std::uint8_t> payload);

    std::unique_ptr<mca::ptl::Connection> connection_;
    int fd_ = -1;  // connection_->fd(), read once: no call into the transport per read or write
    PeerPlacement placement_ = PeerPlacement::maybe_remote;  // fixed at open()
    FrameLimits limits_ = FrameLimits::process_wide();       // of received frames
    bufferevent *bev_ = nullptr;  // the write side; the read side is read_ev_
    FrameHandler on_frame_;
    CloseHandler on_close_;
    bool closing_after_flush_ = false;
    std::string pending_reason_;
    CloseCause pending_cause_ = CloseCause::local;
    CloseCause cause_ = CloseCause::local;
    // send_from_any_thread() against the progress thread: bev_ becoming null,
    // closing_after_flush_, queued_ and spill_ are read or written under it.
    std::mutex write_mutex_;
    bool queued_ = false;              // the output buffer may hold bytes
    std::vector<std::uint8_t> spill_;  // what a direct write left, not yet queued
    void queue_spill();                // progress thread, under write_mutex_

    // The read side (progress thread only).
    event *read_ev_ = nullptr;
    // Received bytes not yet handed out as frames: [in_begin_, in_end_) of a
    // buffer of in_size_ bytes (uninitialised storage: never memset).
    std::unique_ptr<std::uint8_t[]> in_;
    std::size_t in_size_ = 0;
    std::size_t in_begin_ = 0;
    std::size_t in_end_ = 0;
    // Makes room after in_end_ for `need` bytes from in_begin_ (moving what
    // is buffered to the front, growing the buffer when it is too small).
    void reserve_input(std::size_t need);
    void stop_reading();
    // Complete frames waiting for their posted closure, oldest at
    // inbox_head_: each closure captures only this channel's address (small
    // enough for std::function to keep without an allocation) and hands out
    // the oldest frame. While any is posted, inbox_hold_ keeps the channel;
    // a frame whose channel nobody else holds any more is dropped, as it was
    // when the closure held a weak pointer.
    std::vector<Frame> inbox_;
    std::size_t inbox_head_ = 0;
    std::size_t inbox_posted_ = 0;
    std::shared_ptr<Channel> inbox_hold_;
    void post_frame(Frame &&frame);
    void deliver_posted();
};

}  // namespace pmixpp::wire
