/* rlcc-peer: rlcc's own ns-3 driver for the packet-level peer benchmark (bench/peer_ns3, issue 37).
 *
 * It runs the RDMA NIC (RdmaHw / RdmaDriver), qbb (PFC) device and switch-MMU models of the HPCC
 * simulator, written against their public headers. It builds in two trees: aliyun/ns-3-alibabacloud
 * (ns-3.36) and the HPCC repository's own ns-3.17 tree (alibaba-edu/High-Precision-Congestion-Control);
 * RLCC_PEER_NS336 below selects the two API differences. The models are not modified.
 *
 * Inputs (written by bench/peer_ns3/scenarios.py; the same kind of files the HPCC repository's
 * simulation/scratch/third.cc reads, with the same key names):
 *   argv[1]       "KEY value..." lines; the keys are listed in kHwKnobs and Settings::Load;
 *   TOPOLOGY_FILE "nodes switches cables", the switch ids, then "a b rate delay loss" per cable;
 *   FLOW_FILE     the flow count, then "src dst priority dport bytes start_seconds" per flow.
 * Outputs:
 *   FCT_OUTPUT_FILE  per finished QP "sip dip sport dport bytes start_ns fct_ns ideal_fct_ns" (hex IPs);
 *   PFC_OUTPUT_FILE  per PFC frame received "t_ns node node_type ifindex type" (1 pause, 0 resume);
 *   QLEN_TRACE_FILE  every QLEN_MON_INTERVAL_NS, "t_ns switch port egress_bytes" per switch port
 *                    (all priorities of the port summed);
 *   FLOW_TRACE_FILE  every FLOW_MON_INTERVAL_NS, "t_ns src dst sport snd_una_bytes rate_bps" per live
 *                    sender QP (only written when the key is given).
 * INIT_RATE_FRACTION f (default 0 = line rate): each new QP starts at f x its line rate (also its
 * DCQCN target rate, or its HPCC current rate), set right after the QP is created.
 *
 * CC_MODE 11, an rlcc-generated firmware as the congestion control (no rdma-hw.cc code path reacts
 * to mode 11, so the QPs' rates change only here, through RdmaHw::ChangeRate):
 *   RL_FIRMWARE_LIB        the firmware as a shared library (bench/peer_ns3/firmware_lib.py), dlopen'd;
 *   RL_PHASE_FILE          per flow (flow-file order) the ns after its start at which its first probe leaves
 *                          (rlcc's engine phases, uniform in [0, base RTT));
 *   RL_CLOCK_OFFSET_NS     the device clock = simulation ns + this offset, mod 2^32 (rlcc's GoldenController);
 *   RL_SEED_CTX            optional: the 12 context words every flow starts with (rlcc's seeded context of a
 *                          flow started at a rate other than the model's initial one); default all zero;
 *   RL_DECISION_LATENCY_NS the firmware's decision time: a result's rate is applied this long after the event;
 *   RL_DECISION_FILE       optional output: per decision "t_ns flow rtt_ns rate_q20".
 * One 48-byte context and one RTT probe in flight per flow, as the firmware's rtt_req asks. The probe's
 * RTT is measured packet-level by walking it hop by hop with scheduled events along the flow's path
 * (first next hop at each node; the incast paths are unique) and back: on reaching a node it waits the
 * egress port's queue at that moment (switch: the port's egress bytes, all priorities, from the MMU; host
 * NIC: its ACK/high-priority FIFO, data QPs being paced sources rather than a queue) at the port's rate,
 * then, going out, one data packet's serialization (PACKET_PAYLOAD_SIZE), then the link's propagation; the
 * response crosses back with propagation and queueing only. Unloaded, the probe's RTT is thus the path's
 * third.cc pairRtt (2 x propagation + one payload serialization per hop), the base RTT both sides use.
 * On its return the firmware gets the RTT event {timestamp: return, request sent: departure, request
 * received and response sent: arrival at the receiver} (device clock); results.rate (Q20 fraction of
 * line rate) becomes the QP's rate RL_DECISION_LATENCY_NS later, and the next probe leaves at once.
 */

#include <algorithm>
#include <cmath>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/error-model.h"
#include "ns3/internet-module.h"
#include "ns3/qbb-helper.h"
#include <ns3/rdma-client-helper.h>
#include <ns3/rdma-driver.h>
#include <ns3/rdma.h>
#include <ns3/switch-node.h>

// The ns-3.36 fork (it alone ships nvswitch-node.h) takes extra RdmaClientHelper arguments and an
// NVSwitch flag in RdmaHw::AddTableEntry.
#if defined(__has_include)
#if __has_include(<ns3/nvswitch-node.h>)
#define RLCC_PEER_NS336 1
#endif
#endif
#ifndef RLCC_PEER_NS336
#define RLCC_PEER_NS336 0
#endif

using ns3::Ptr;

namespace {

[[noreturn]] void Fail(const std::string &what, int code) {
  std::cerr << "rlcc-peer: error: " << what << "\n";
  std::exit(code);
}

// ---------------------------------------------------------------- inputs

/* The config file as a dictionary: first word of a line -> the rest of the line. */
class KeyValues {
 public:
  explicit KeyValues(const std::string &path) {
    std::ifstream in(path.c_str());
    if (!in) Fail("cannot read config " + path, 3);
    for (std::string line; std::getline(in, line);) {
      const size_t k0 = line.find_first_not_of(" \t\r");
      if (k0 == std::string::npos) continue;
      const size_t k1 = line.find_first_of(" \t\r", k0);
      const std::string key = line.substr(k0, k1 - k0);
      const size_t v0 = k1 == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", k1);
      std::string value = v0 == std::string::npos ? "" : line.substr(v0);
      while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
      entries_[key] = value;
    }
  }
  bool Has(const char *key) const { return entries_.count(key) > 0; }
  std::string Text(const char *key, const char *fallback) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? fallback : it->second;
  }
  double Real(const char *key, double fallback) const {
    return Has(key) ? std::strtod(Text(key, "").c_str(), nullptr) : fallback;
  }
  uint64_t Count(const char *key, uint64_t fallback) const {
    return Has(key) ? std::strtoull(Text(key, "").c_str(), nullptr, 10) : fallback;
  }

 private:
  std::map<std::string, std::string> entries_;
};

/* Whitespace-separated tokens of a file, read one typed value at a time. */
class Tokens {
 public:
  explicit Tokens(const std::string &path) : path_(path), in_(path.c_str()) {
    if (!in_) Fail("cannot read " + path, 3);
  }
  template <typename T>
  T Next(const char *what) {
    T v;
    if (!(in_ >> v)) Fail(path_ + ": expected " + what, 3);
    return v;
  }

 private:
  std::string path_;
  std::ifstream in_;
};

/* A per-link-rate table "count rate value rate value ..." (KMIN_MAP, KMAX_MAP, PMAX_MAP). */
std::map<uint64_t, double> RateTable(const std::string &text) {
  std::map<uint64_t, double> table;
  std::istringstream in(text);
  unsigned entries = 0;
  in >> entries;
  while (entries-- > 0) {
    uint64_t bps = 0;
    double value = 0;
    if (!(in >> bps >> value)) Fail("a rate table has fewer entries than its count: " + text, 3);
    table[bps] = value;
  }
  return table;
}

struct Cable {
  uint32_t a, b;
  std::string rate, delay;
};

struct FlowSpec {
  uint32_t src, dst, pg, dport;
  uint64_t bytes;
  double startSeconds;
};

/* Everything the run needs that is not an RdmaHw attribute (those go through kHwKnobs). */
struct Scenario {
  uint32_t payload = 1000, ccMode = 1, intMulti = 1, pauseTime = 5;
  bool qcn = true, dynamicPfc = true, window = true, ackFirstQueue = false;
  double stopSeconds = 0.01, initRateFraction = 0, pintProb = 1.0;
  uint64_t bufferMiB = 32, qlenEveryNs = 1000, flowEveryNs = 5000;
  std::map<uint64_t, double> kmin, kmax, pmax;
  std::string fctPath, pfcPath, qlenPath, flowTracePath;
  // CC_MODE 11 (the RL firmware): see the file comment
  std::string rlLib, rlPhasePath, rlDecisionPath;
  uint64_t rlClockOffsetNs = 0, rlLatencyNs = 0;
  std::vector<uint32_t> rlSeedCtx;
  std::vector<bool> isSwitch;
  std::vector<Cable> cables;
  std::vector<FlowSpec> flows;

  void Load(const KeyValues &kv) {
    payload = kv.Count("PACKET_PAYLOAD_SIZE", payload);
    ccMode = kv.Count("CC_MODE", ccMode);
    intMulti = kv.Count("INT_MULTI", intMulti);
    pauseTime = kv.Count("PAUSE_TIME", pauseTime);
    qcn = kv.Count("ENABLE_QCN", 1) != 0;
    dynamicPfc = kv.Count("USE_DYNAMIC_PFC_THRESHOLD", 1) != 0;
    window = kv.Count("HAS_WIN", 1) != 0;
    ackFirstQueue = kv.Count("ACK_HIGH_PRIO", 0) != 0;
    stopSeconds = kv.Real("SIMULATOR_STOP_TIME", stopSeconds);
    initRateFraction = kv.Real("INIT_RATE_FRACTION", initRateFraction);
    pintProb = kv.Real("PINT_PROB", pintProb);
    bufferMiB = kv.Count("BUFFER_SIZE", bufferMiB);
    qlenEveryNs = kv.Count("QLEN_MON_INTERVAL_NS", qlenEveryNs);
    flowEveryNs = kv.Count("FLOW_MON_INTERVAL_NS", flowEveryNs);
    kmin = RateTable(kv.Text("KMIN_MAP", "0"));
    kmax = RateTable(kv.Text("KMAX_MAP", "0"));
    pmax = RateTable(kv.Text("PMAX_MAP", "0"));
    fctPath = kv.Text("FCT_OUTPUT_FILE", "fct.txt");
    pfcPath = kv.Text("PFC_OUTPUT_FILE", "pfc.txt");
    qlenPath = kv.Text("QLEN_TRACE_FILE", "qlen_trace.txt");
    flowTracePath = kv.Text("FLOW_TRACE_FILE", "");
    rlLib = kv.Text("RL_FIRMWARE_LIB", "");
    rlPhasePath = kv.Text("RL_PHASE_FILE", "");
    rlDecisionPath = kv.Text("RL_DECISION_FILE", "");
    rlClockOffsetNs = kv.Count("RL_CLOCK_OFFSET_NS", 0);
    rlLatencyNs = kv.Count("RL_DECISION_LATENCY_NS", 0);
    std::istringstream seed(kv.Text("RL_SEED_CTX", ""));
    for (uint64_t word; seed >> word;) rlSeedCtx.push_back(uint32_t(word));
    if (!kv.Has("TOPOLOGY_FILE") || !kv.Has("FLOW_FILE")) Fail("the config needs TOPOLOGY_FILE and FLOW_FILE", 3);
    LoadTopology(kv.Text("TOPOLOGY_FILE", ""));
    LoadFlows(kv.Text("FLOW_FILE", ""));
  }

  void LoadTopology(const std::string &path) {
    Tokens t(path);
    const uint32_t nodes = t.Next<uint32_t>("the node count");
    const uint32_t switches = t.Next<uint32_t>("the switch count");
    const uint32_t links = t.Next<uint32_t>("the cable count");
    isSwitch.assign(nodes, false);
    for (uint32_t s = 0; s < switches; ++s) {
      const uint32_t id = t.Next<uint32_t>("a switch id");
      if (id >= nodes) Fail(path + ": switch id out of range", 3);
      isSwitch[id] = true;
    }
    for (uint32_t c = 0; c < links; ++c) {
      Cable cable;
      cable.a = t.Next<uint32_t>("a cable end");
      cable.b = t.Next<uint32_t>("a cable end");
      cable.rate = t.Next<std::string>("a cable rate");
      cable.delay = t.Next<std::string>("a cable delay");
      t.Next<double>("a cable loss rate");  // the peer runs lossless links; the column is read and ignored
      if (cable.a >= nodes || cable.b >= nodes) Fail(path + ": cable end out of range", 3);
      cables.push_back(cable);
    }
  }

  void LoadFlows(const std::string &path) {
    Tokens t(path);
    const uint32_t count = t.Next<uint32_t>("the flow count");
    for (uint32_t i = 0; i < count; ++i) {
      FlowSpec f;
      f.src = t.Next<uint32_t>("a flow source");
      f.dst = t.Next<uint32_t>("a flow destination");
      f.pg = t.Next<uint32_t>("a flow priority");
      f.dport = t.Next<uint32_t>("a flow destination port");
      f.bytes = t.Next<uint64_t>("a flow size");
      f.startSeconds = t.Next<double>("a flow start time");
      const bool hosts = f.src < isSwitch.size() && f.dst < isSwitch.size() && !isSwitch[f.src] && !isSwitch[f.dst];
      if (!hosts) Fail(path + ": flow " + std::to_string(i + 1) + " does not join two hosts", 3);
      flows.push_back(f);
    }
  }
};

/* RdmaHw attributes and the config keys they come from (default when the key is absent). */
enum class Knob { Flag, Whole, Real, Rate };
struct HwKnob {
  const char *attribute, *key;
  Knob kind;
  const char *fallback;
};
const HwKnob kHwKnobs[] = {
    {"ClampTargetRate", "CLAMP_TARGET_RATE", Knob::Flag, "0"},
    {"AlphaResumInterval", "ALPHA_RESUME_INTERVAL", Knob::Real, "55"},
    {"RPTimer", "RP_TIMER", Knob::Real, "300"},
    {"FastRecoveryTimes", "FAST_RECOVERY_TIMES", Knob::Whole, "5"},
    {"EwmaGain", "EWMA_GAIN", Knob::Real, "0.0625"},
    {"RateAI", "RATE_AI", Knob::Rate, "5Mb/s"},
    {"RateHAI", "RATE_HAI", Knob::Rate, "50Mb/s"},
    {"L2BackToZero", "L2_BACK_TO_ZERO", Knob::Flag, "0"},
    {"L2ChunkSize", "L2_CHUNK_SIZE", Knob::Whole, "0"},
    {"L2AckInterval", "L2_ACK_INTERVAL", Knob::Whole, "0"},
    {"CcMode", "CC_MODE", Knob::Whole, "1"},
    {"RateDecreaseInterval", "RATE_DECREASE_INTERVAL", Knob::Real, "4"},
    {"MinRate", "MIN_RATE", Knob::Rate, "100Mb/s"},
    {"Mtu", "PACKET_PAYLOAD_SIZE", Knob::Whole, "1000"},
    {"MiThresh", "MI_THRESH", Knob::Whole, "5"},
    {"VarWin", "VAR_WIN", Knob::Flag, "0"},
    {"FastReact", "FAST_REACT", Knob::Flag, "1"},
    {"MultiRate", "MULTI_RATE", Knob::Flag, "1"},
    {"SampleFeedback", "SAMPLE_FEEDBACK", Knob::Flag, "0"},
    {"TargetUtil", "U_TARGET", Knob::Real, "0.95"},
    {"RateBound", "RATE_BOUND", Knob::Flag, "1"},
    {"DctcpRateAI", "DCTCP_RATE_AI", Knob::Rate, "1000Mb/s"},
};

void ApplyKnob(Ptr<ns3::RdmaHw> hw, const HwKnob &knob, const KeyValues &kv) {
  const std::string text = kv.Text(knob.key, knob.fallback);
  switch (knob.kind) {
    case Knob::Flag:
      hw->SetAttribute(knob.attribute, ns3::BooleanValue(std::strtoull(text.c_str(), nullptr, 10) != 0));
      break;
    case Knob::Whole:
      hw->SetAttribute(knob.attribute, ns3::UintegerValue(std::strtoull(text.c_str(), nullptr, 10)));
      break;
    case Knob::Real:
      hw->SetAttribute(knob.attribute, ns3::DoubleValue(std::strtod(text.c_str(), nullptr)));
      break;
    case Knob::Rate:
      hw->SetAttribute(knob.attribute, ns3::DataRateValue(ns3::DataRate(text)));
      break;
  }
}

// ---------------------------------------------------------------- the RL firmware (CC_MODE 11)

const uint32_t kRlCcMode = 11;  // no rdma-hw.cc code path reacts to it: the QP rates are the firmware's
const uint32_t kShimAbi = 1;     // rlcc_peer_shim.c RLCC_PEER_ABI

/* An rlcc-generated firmware built as a shared library by firmware_lib.py (firmware.c + the SDK
 * stub's host runtime + rlcc_peer_shim.c), loaded at run time: one peer binary runs any firmware. */
class FirmwareLib {
 public:
  explicit FirmwareLib(const std::string &path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) Fail("RL_FIRMWARE_LIB: cannot load " + path + ": " + dlerror(), 3);
    if (Symbol<uint32_t (*)()>("rlcc_peer_abi")() != kShimAbi)
      Fail("RL_FIRMWARE_LIB: " + path + " was built from another rlcc_peer_shim.c ABI", 3);
    ctxWords_ = Symbol<uint32_t (*)()>("rlcc_peer_ctx_words")();
    rtt_ = Symbol<RttEventFn>("rlcc_peer_rtt_event");
    Symbol<uint32_t (*)()>("rlcc_peer_init")();
  }
  uint32_t CtxWords() const { return ctxWords_; }
  /* results.rate (Q20) of the RTT event; *rttReq: the firmware asks for the next probe. */
  uint32_t RttEvent(uint32_t *ctx, uint32_t now, uint32_t sent, uint32_t received, uint32_t responded,
                    uint32_t *rttReq) const {
    return rtt_(ctx, now, sent, received, responded, rttReq);
  }

 private:
  typedef uint32_t (*RttEventFn)(uint32_t *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t *);
  template <typename F>
  F Symbol(const char *name) {
    void *s = dlsym(handle_, name);
    if (!s) Fail(std::string("RL_FIRMWARE_LIB: no symbol ") + name, 3);
    return reinterpret_cast<F>(s);
  }
  void *handle_ = nullptr;
  uint32_t ctxWords_ = 0;
  RttEventFn rtt_ = nullptr;
};

/* One egress port a probe crosses. */
struct ProbeHop {
  uint32_t node, ifIndex;
  uint64_t bps, delayNs;
};

/* A flow under the firmware: its context, its probe's way there and back, the probe in flight. */
struct RlFlow {
  uint32_t src = 0, dst = 0, pg = 0;
  uint64_t startNs = 0;
  std::vector<uint32_t> ctx;
  std::vector<ProbeHop> out, back;
  uint64_t sentNs = 0, reachedNs = 0;
};

// ---------------------------------------------------------------- the network

/* Host addresses are 11.hi.lo.1 with hi.lo the node id; peer_output.py decodes them the same way. */
ns3::Ipv4Address HostAddress(uint32_t node) { return ns3::Ipv4Address((11u << 24) | ((node & 0xffffu) << 8) | 1u); }
uint32_t NodeOfAddress(uint32_t address) { return (address >> 8) & 0xffffu; }

/* One end of a cable, seen from the node that owns the device. */
struct Port {
  uint32_t peer, ifIndex;
  uint64_t bps, delayNs;
};

/* Shortest-path facts of a (node, destination host) pair, along the BFS tree towards the host. */
struct PathFacts {
  uint64_t propagationNs = 0, serializationNs = 0, bottleneckBps = UINT64_MAX;
};

/* Reports the PFC frames one device receives. */
struct PfcTap {
  FILE *out;
  uint32_t node, nodeType, ifIndex;
  void OnPfc(uint32_t type) {
    std::fprintf(out, "%" PRIu64 " %u %u %u %u\n", uint64_t(ns3::Simulator::Now().GetTimeStep()), node, nodeType,
                 ifIndex, type);
    std::fflush(out);  // rare, and kept if a later event crashes the peer
  }
};

class PeerRun {
 public:
  explicit PeerRun(const KeyValues &kv) : kv_(kv) { sc_.Load(kv); }

  int Run() {
    SetModelDefaults();
    BuildTopology();
    ConfigureSwitches();
    ConfigureRdma();
    InstallRouting();
    MeasurePaths();
    StartFlows();
    StartFirmware();
    StartMonitors();
    ns3::Simulator::Stop(ns3::Seconds(sc_.stopSeconds));
    ns3::Simulator::Run();
    ns3::Simulator::Destroy();
    for (FILE *f : {qlenOut_, flowOut_, fctOut_, pfcOut_, rlOut_})
      if (f) std::fclose(f);
    return 0;
  }

 private:
  static FILE *OpenOutput(const std::string &path) {
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f) Fail("cannot write " + path, 3);
    return f;
  }

  bool IsHost(uint32_t id) const { return !sc_.isSwitch[id]; }
  Ptr<ns3::SwitchNode> Switch(uint32_t id) const { return ns3::DynamicCast<ns3::SwitchNode>(nodes_.Get(id)); }
  Ptr<ns3::RdmaHw> Nic(uint32_t id) const { return nodes_.Get(id)->GetObject<ns3::RdmaDriver>()->m_rdma; }

  void SetModelDefaults() {
    ns3::Config::SetDefault("ns3::QbbNetDevice::PauseTime", ns3::UintegerValue(sc_.pauseTime));
    ns3::Config::SetDefault("ns3::QbbNetDevice::QcnEnabled", ns3::BooleanValue(sc_.qcn));
    ns3::Config::SetDefault("ns3::QbbNetDevice::DynamicThreshold", ns3::BooleanValue(sc_.dynamicPfc));
    ns3::IntHop::multi = sc_.intMulti;
    // INT stamping follows the congestion control: full hops for HPCC (3), timestamps for TIMELY (7).
    if (sc_.ccMode == 3)
      ns3::IntHeader::mode = ns3::IntHeader::NORMAL;
    else if (sc_.ccMode == 7)
      ns3::IntHeader::mode = ns3::IntHeader::TS;
    else
      ns3::IntHeader::mode = ns3::IntHeader::NONE;
  }

  /* Nodes in id order, the IP stack, then one qbb link per cable in file order (device indices follow). */
  void BuildTopology() {
    const uint32_t count = sc_.isSwitch.size();
    for (uint32_t id = 0; id < count; ++id) {
      if (IsHost(id)) {
        nodes_.Add(ns3::CreateObject<ns3::Node>());
        continue;
      }
      Ptr<ns3::SwitchNode> sw = ns3::CreateObject<ns3::SwitchNode>();
      nodes_.Add(sw);
      sw->SetAttribute("EcnEnabled", ns3::BooleanValue(sc_.qcn));
    }
    ns3::InternetStackHelper stack;
    stack.Install(nodes_);
    ports_.assign(count, std::vector<Port>());
    pfcOut_ = OpenOutput(sc_.pfcPath);

    // One receive error model shared by every device, with a rate of 0: lossless links.
    Ptr<ns3::RateErrorModel> lossless = ns3::CreateObject<ns3::RateErrorModel>();
    Ptr<ns3::UniformRandomVariable> draw = ns3::CreateObject<ns3::UniformRandomVariable>();
    lossless->SetRandomVariable(draw);
    draw->SetStream(50);
    lossless->SetAttribute("ErrorRate", ns3::DoubleValue(0.0));
    lossless->SetAttribute("ErrorUnit", ns3::StringValue("ERROR_UNIT_PACKET"));

    ns3::QbbHelper qbb;
    ns3::Ipv4AddressHelper subnets;
    for (size_t c = 0; c < sc_.cables.size(); ++c) {
      const Cable &cable = sc_.cables[c];
      qbb.SetDeviceAttribute("DataRate", ns3::StringValue(cable.rate));
      qbb.SetChannelAttribute("Delay", ns3::StringValue(cable.delay));
      qbb.SetDeviceAttribute("ReceiveErrorModel", ns3::PointerValue(lossless));
      ns3::NetDeviceContainer pair = qbb.Install(nodes_.Get(cable.a), nodes_.Get(cable.b));
      const uint32_t ends[2] = {cable.a, cable.b};
      for (int e = 0; e < 2; ++e)
        if (IsHost(ends[e])) {
          Ptr<ns3::Ipv4> ip = nodes_.Get(ends[e])->GetObject<ns3::Ipv4>();
          ip->AddInterface(pair.Get(e));
          ip->AddAddress(1, ns3::Ipv4InterfaceAddress(HostAddress(ends[e]), ns3::Ipv4Mask(0xff000000)));
        }
      for (int e = 0; e < 2; ++e) {
        Ptr<ns3::QbbNetDevice> dev = ns3::DynamicCast<ns3::QbbNetDevice>(pair.Get(e));
        Port port;
        port.peer = ends[1 - e];
        port.ifIndex = dev->GetIfIndex();
        port.bps = dev->GetDataRate().GetBitRate();
        port.delayNs = ns3::DynamicCast<ns3::QbbChannel>(dev->GetChannel())->GetDelay().GetTimeStep();
        ports_[ends[e]].push_back(port);
        taps_.push_back(PfcTap{pfcOut_, ends[e], nodes_.Get(ends[e])->GetNodeType(), port.ifIndex});
        dev->TraceConnectWithoutContext("QbbPfc", ns3::MakeCallback(&PfcTap::OnPfc, &taps_.back()));
      }
      // Each cable its own /24 out of 10.0.0.0/8 (the models route on host addresses only).
      subnets.SetBase(ns3::Ipv4Address(0x0a000000u + uint32_t(c + 1) * 256u), ns3::Ipv4Mask("255.255.255.0"));
      subnets.Assign(pair);
    }
    // Neighbours in node-id order: the order ECMP next hops are offered to the switches.
    for (std::vector<Port> &list : ports_)
      std::stable_sort(list.begin(), list.end(), [](const Port &x, const Port &y) { return x.peer < y.peer; });
  }

  /* ECN thresholds per port rate, PFC headroom (3 link BDPs) and alpha shift, buffer size. */
  void ConfigureSwitches() {
    uint64_t hostBps = 0;
    for (uint32_t id = 0; id < nodes_.GetN() && hostBps == 0; ++id)
      if (IsHost(id)) hostBps = ports_[id].front().bps;
    for (uint32_t id = 0; id < nodes_.GetN(); ++id) {
      if (IsHost(id)) continue;
      Ptr<ns3::SwitchNode> sw = Switch(id);
      const uint32_t devices = sw->GetNDevices();
      for (uint32_t p = 1; p < devices; ++p) {
        Ptr<ns3::QbbNetDevice> dev = ns3::DynamicCast<ns3::QbbNetDevice>(sw->GetDevice(p));
        const uint64_t bps = dev->GetDataRate().GetBitRate();
        if (!sc_.kmin.count(bps) || !sc_.kmax.count(bps) || !sc_.pmax.count(bps))
          Fail("KMIN_MAP / KMAX_MAP / PMAX_MAP have no entry for a " + std::to_string(bps) + " b/s port", 3);
        sw->m_mmu->ConfigEcn(p, uint32_t(sc_.kmin[bps]), uint32_t(sc_.kmax[bps]), sc_.pmax[bps]);
        const uint64_t delayNs = ns3::DynamicCast<ns3::QbbChannel>(dev->GetChannel())->GetDelay().GetTimeStep();
        const uint64_t bdpBytes = bps * delayNs / 8 / 1000000000u;
        sw->m_mmu->ConfigHdrm(p, 3 * bdpBytes);
        sw->m_mmu->pfc_a_shift[p] = AlphaShift(bps, hostBps);
      }
      sw->m_mmu->ConfigNPort(devices - 1);
      sw->m_mmu->ConfigBufferSize(sc_.bufferMiB * 1024 * 1024);
      sw->m_mmu->node_id = id;  // named in the MMU's drop messages
    }
  }

  /* Dynamic PFC threshold shift: 3, one less per doubling of the port rate over the host rate. */
  static uint32_t AlphaShift(uint64_t portBps, uint64_t hostBps) {
    uint32_t shift = 3;
    for (uint64_t r = portBps; shift > 0 && r > hostBps; r /= 2) --shift;
    return shift;
  }

  /* An RdmaHw + RdmaDriver per host, with the configured attributes; finished QPs go to the FCT file. */
  void ConfigureRdma() {
    fctOut_ = OpenOutput(sc_.fctPath);
    for (uint32_t id = 0; id < nodes_.GetN(); ++id) {
      if (!IsHost(id)) continue;
      Ptr<ns3::RdmaHw> hw = ns3::CreateObject<ns3::RdmaHw>();
      for (const HwKnob &knob : kHwKnobs) ApplyKnob(hw, knob, kv_);
      hw->SetPintSmplThresh(sc_.pintProb);
      Ptr<ns3::RdmaDriver> driver = ns3::CreateObject<ns3::RdmaDriver>();
      Ptr<ns3::Node> node = nodes_.Get(id);
      driver->SetNode(node);
      driver->SetRdmaHw(hw);
      node->AggregateObject(driver);
      driver->Init();
      driver->TraceConnectWithoutContext("QpComplete", ns3::MakeCallback(&PeerRun::OnQpFinished, this));
    }
    ns3::RdmaEgressQueue::ack_q_idx = sc_.ackFirstQueue ? 0 : 3;
  }

  /* Own BFS from every host over switches; each node gets, per destination host, all neighbours one
   * hop closer (in BFS order) as ECMP next hops, and the path facts along the first-found tree. */
  void InstallRouting() {
    const uint32_t count = nodes_.GetN();
    for (uint32_t root = 0; root < count; ++root) {
      if (!IsHost(root)) continue;
      std::vector<int> hops(count, -1);
      std::vector<PathFacts> facts(count);
      std::vector<std::vector<uint32_t>> via(count);
      std::deque<uint32_t> frontier(1, root);
      hops[root] = 0;
      facts[root] = PathFacts();
      while (!frontier.empty()) {
        const uint32_t u = frontier.front();
        frontier.pop_front();
        for (const Port &p : ports_[u]) {
          const uint32_t v = p.peer;
          if (hops[v] < 0) {
            hops[v] = hops[u] + 1;
            facts[v].propagationNs = facts[u].propagationNs + p.delayNs;
            facts[v].serializationNs = facts[u].serializationNs + uint64_t(sc_.payload) * 8 * 1000000000u / p.bps;
            facts[v].bottleneckBps = std::min(facts[u].bottleneckBps, p.bps);
            if (!IsHost(v)) frontier.push_back(v);  // hosts do not forward
          }
          if (hops[v] == hops[u] + 1) via[v].push_back(u);
        }
      }
      for (uint32_t v = 0; v < count; ++v) {
        if (hops[v] >= 0) paths_[std::make_pair(v, root)] = facts[v];
        for (uint32_t next : via[v]) AddRoute(v, root, next);
        if (!via[v].empty()) firstHop_[std::make_pair(v, root)] = via[v].front();
      }
    }
  }

  uint32_t DeviceTowards(uint32_t node, uint32_t neighbour) const {
    for (const Port &p : ports_[node])
      if (p.peer == neighbour) return p.ifIndex;
    Fail("internal: no cable between neighbours", 1);
  }

  void AddRoute(uint32_t node, uint32_t dstHost, uint32_t next) {
    ns3::Ipv4Address dst = HostAddress(dstHost);
    const uint32_t dev = DeviceTowards(node, next);
    if (!IsHost(node))
      Switch(node)->AddTableEntry(dst, dev);
    else
#if RLCC_PEER_NS336
      Nic(node)->AddTableEntry(dst, dev, false);
#else
      Nic(node)->AddTableEntry(dst, dev);
#endif
  }

  /* The network-wide base RTT T and BDP (the largest over host pairs), given to switches and QPs. */
  void MeasurePaths() {
    for (const auto &entry : paths_) {
      const uint32_t a = entry.first.first, b = entry.first.second;
      if (!IsHost(a)) continue;
      const PathFacts &f = entry.second;
      const uint64_t rtt = 2 * f.propagationNs + f.serializationNs;
      pathRtt_[entry.first] = rtt;
      baseRttNs_ = std::max(baseRttNs_, rtt);
      if (a != b) bdpBytes_ = std::max(bdpBytes_, rtt * f.bottleneckBps / 1000000000u / 8);
    }
    std::printf("base RTT %" PRIu64 " ns, BDP %" PRIu64 " B\n", baseRttNs_, bdpBytes_);
    for (uint32_t id = 0; id < nodes_.GetN(); ++id) {
      if (IsHost(id)) continue;
      Switch(id)->SetAttribute("CcMode", ns3::UintegerValue(sc_.ccMode));
      Switch(id)->SetAttribute("MaxRtt", ns3::UintegerValue(baseRttNs_));
    }
  }

  void StartFlows() {
    flowSport_.assign(sc_.flows.size(), 0);
    for (size_t i = 0; i < sc_.flows.size(); ++i)
      ns3::Simulator::Schedule(ns3::Seconds(sc_.flows[i].startSeconds), &PeerRun::LaunchFlow, this, i);
  }

  void LaunchFlow(size_t index) {
    const FlowSpec &f = sc_.flows[index];
    std::map<std::pair<uint32_t, uint32_t>, uint16_t>::iterator slot =
        nextSport_.insert(std::make_pair(std::make_pair(f.src, f.dst), uint16_t(10000))).first;
    const uint16_t sport = slot->second++;
    flowSport_[index] = sport;
    const uint32_t window = sc_.window ? uint32_t(bdpBytes_) : 0;
#if RLCC_PEER_NS336
    ns3::RdmaClientHelper client(f.pg, HostAddress(f.src), HostAddress(f.dst), sport, f.dport, f.bytes, window,
                                 baseRttNs_, nullptr, nullptr, 0, f.src, f.dst);
#else
    ns3::RdmaClientHelper client(f.pg, HostAddress(f.src), HostAddress(f.dst), sport, f.dport, f.bytes, window,
                                 baseRttNs_);
#endif
    client.Install(nodes_.Get(f.src)).Start(ns3::Time(0));
    if (sc_.initRateFraction > 0) {
      const uint64_t key = ns3::RdmaHw::GetQpKey(HostAddress(f.dst).Get(), sport, f.pg);
      ns3::Simulator::ScheduleNow(&PeerRun::SetInitialRate, this, f.src, key, 8u);
    }
  }

  /* The QP is created when the application starts, a couple of same-time events after Install:
   * look again at the same timestamp until it exists, then set its starting rate. */
  void SetInitialRate(uint32_t host, uint64_t key, uint32_t attemptsLeft) {
    Ptr<ns3::RdmaHw> hw = Nic(host);
    std::unordered_map<uint64_t, Ptr<ns3::RdmaQueuePair>>::iterator found = hw->m_qpMap.find(key);
    if (found == hw->m_qpMap.end()) {
      if (attemptsLeft == 0) Fail("INIT_RATE_FRACTION: a QP never appeared", 1);
      ns3::Simulator::ScheduleNow(&PeerRun::SetInitialRate, this, host, key, attemptsLeft - 1);
      return;
    }
    Ptr<ns3::RdmaQueuePair> qp = found->second;
    const ns3::DataRate start(uint64_t(qp->m_max_rate.GetBitRate() * sc_.initRateFraction));
    qp->m_rate = start;
    if (sc_.ccMode == 1) qp->mlx.m_targetRate = start;  // DCQCN recovers towards its target
    if (sc_.ccMode == 3) qp->hp.m_curRate = start;      // HPCC's reference rate
  }

  // ---- CC_MODE 11: the firmware, fed by packet-level RTT probes (file comment)

  void StartFirmware() {
    if (sc_.ccMode != kRlCcMode) return;
    if (sc_.rlLib.empty()) Fail("CC_MODE 11 needs RL_FIRMWARE_LIB (bench/peer_ns3/firmware_lib.py)", 3);
    if (sc_.rlPhasePath.empty()) Fail("CC_MODE 11 needs RL_PHASE_FILE", 3);
    firmware_.reset(new FirmwareLib(sc_.rlLib));
    if (!sc_.rlSeedCtx.empty() && sc_.rlSeedCtx.size() != firmware_->CtxWords())
      Fail("RL_SEED_CTX has " + std::to_string(sc_.rlSeedCtx.size()) + " words, the firmware's context " +
               std::to_string(firmware_->CtxWords()), 3);
    if (!sc_.rlDecisionPath.empty()) rlOut_ = OpenOutput(sc_.rlDecisionPath);
    Tokens phases(sc_.rlPhasePath);
    rl_.resize(sc_.flows.size());
    for (size_t i = 0; i < sc_.flows.size(); ++i) {
      const FlowSpec &spec = sc_.flows[i];
      RlFlow &f = rl_[i];
      f.src = spec.src;
      f.dst = spec.dst;
      f.pg = spec.pg;
      f.ctx = sc_.rlSeedCtx.empty() ? std::vector<uint32_t>(firmware_->CtxWords(), 0u) : sc_.rlSeedCtx;
      f.out = ProbePath(spec.src, spec.dst);
      f.back = ProbePath(spec.dst, spec.src);
      const double phase = phases.Next<double>("a probe phase (ns) per flow");
      if (phase < 0) Fail(sc_.rlPhasePath + ": a negative phase", 3);
      const uint64_t at = uint64_t(std::llround(spec.startSeconds * 1e9 + phase));
      ns3::Simulator::Schedule(ns3::NanoSeconds(at), &PeerRun::SendProbe, this, i);
    }
  }

  /* The egress ports from host a to host b, along the first next hop at each node. */
  std::vector<ProbeHop> ProbePath(uint32_t a, uint32_t b) const {
    std::vector<ProbeHop> hops;
    for (uint32_t node = a; node != b;) {
      std::map<std::pair<uint32_t, uint32_t>, uint32_t>::const_iterator next = firstHop_.find(std::make_pair(node, b));
      if (next == firstHop_.end()) Fail("RL probe: no route between flow ends", 3);
      for (const Port &p : ports_[node])
        if (p.peer == next->second) {
          hops.push_back(ProbeHop{node, p.ifIndex, p.bps, p.delayNs});
          break;
        }
      node = next->second;
    }
    return hops;
  }

  /* Bytes waiting at an egress port now: a switch port's MMU egress bytes (all priorities), or a host
   * NIC's ACK/high-priority FIFO (the data QPs are paced sources, not a FIFO). */
  uint64_t QueuedBytes(uint32_t node, uint32_t ifIndex) const {
    if (!IsHost(node)) {
      uint64_t queued = 0;
      for (uint32_t prio = 0; prio < ns3::SwitchMmu::qCnt; ++prio) queued += Switch(node)->m_mmu->egress_bytes[ifIndex][prio];
      return queued;
    }
    Ptr<ns3::QbbNetDevice> dev = ns3::DynamicCast<ns3::QbbNetDevice>(nodes_.Get(node)->GetDevice(ifIndex));
    return dev->m_rdmaEQ->m_ackQ->GetNBytes();
  }

  uint32_t DeviceClock(uint64_t ns) const { return uint32_t((ns + sc_.rlClockOffsetNs) & 0xffffffffu); }

  void SendProbe(size_t i) {
    rl_[i].sentNs = ns3::Simulator::Now().GetTimeStep();
    ProbeAt(i, false, 0);
  }

  /* The probe of flow i reached hop h of its way out (back = false) or back; h == hops: the end. */
  void ProbeAt(size_t i, bool back, size_t h) {
    RlFlow &f = rl_[i];
    const std::vector<ProbeHop> &path = back ? f.back : f.out;
    if (h == path.size()) {
      if (back) {
        OnProbeReturn(i);
      } else {
        f.reachedNs = ns3::Simulator::Now().GetTimeStep();  // the receiver responds at once
        ProbeAt(i, true, 0);
      }
      return;
    }
    const ProbeHop &hop = path[h];
    double ns = double(QueuedBytes(hop.node, hop.ifIndex)) * 8e9 / double(hop.bps) + double(hop.delayNs);
    if (!back) ns += double(sc_.payload) * 8e9 / double(hop.bps);
    ns3::Simulator::Schedule(ns3::NanoSeconds(std::llround(ns)), &PeerRun::ProbeAt, this, i, back, h + 1);
  }

  Ptr<ns3::RdmaQueuePair> FlowQp(size_t i) const {
    const RlFlow &f = rl_[i];
    Ptr<ns3::RdmaHw> hw = Nic(f.src);
    const uint64_t key = ns3::RdmaHw::GetQpKey(HostAddress(f.dst).Get(), flowSport_[i], uint16_t(f.pg));
    std::unordered_map<uint64_t, Ptr<ns3::RdmaQueuePair>>::iterator found = hw->m_qpMap.find(key);
    if (found == hw->m_qpMap.end()) return Ptr<ns3::RdmaQueuePair>();
    return found->second;
  }

  void OnProbeReturn(size_t i) {
    RlFlow &f = rl_[i];
    if (!FlowQp(i)) return;  // the flow finished: no more probes
    const uint64_t now = ns3::Simulator::Now().GetTimeStep();
    uint32_t rttReq = 0;
    const uint32_t rate = firmware_->RttEvent(f.ctx.data(), DeviceClock(now), DeviceClock(f.sentNs),
                                              DeviceClock(f.reachedNs), DeviceClock(f.reachedNs), &rttReq);
    if (rlOut_)
      std::fprintf(rlOut_, "%" PRIu64 " %zu %" PRIu64 " %u\n", now, i, now - f.sentNs, unsigned(rate));
    ns3::Simulator::Schedule(ns3::NanoSeconds(sc_.rlLatencyNs), &PeerRun::ApplyRate, this, i, rate);
    if (rttReq) SendProbe(i);
  }

  /* results.rate (Q20 fraction of line rate) as the QP's rate, via RdmaHw::ChangeRate (which also
   * moves the QP's next send time by the change of one packet's transmission time). */
  void ApplyRate(size_t i, uint32_t rateQ20) {
    Ptr<ns3::RdmaQueuePair> qp = FlowQp(i);
    if (!qp) return;
    const uint64_t bps = std::max<uint64_t>(1, (qp->m_max_rate.GetBitRate() * uint64_t(rateQ20)) >> 20);
    Nic(rl_[i].src)->ChangeRate(qp, ns3::DataRate(bps));
  }

  void OnQpFinished(Ptr<ns3::RdmaQueuePair> qp) {
    const uint32_t src = NodeOfAddress(qp->sip.Get()), dst = NodeOfAddress(qp->dip.Get());
    const std::pair<uint32_t, uint32_t> key(src, dst);
    // Alone in the network: one base RTT plus the bytes on the wire (payload + per-packet headers
    // without INT) at the bottleneck rate.
    const uint64_t packets = (qp->m_size + sc_.payload - 1) / sc_.payload;
    const uint64_t perPacket = ns3::CustomHeader::GetStaticWholeHeaderSize() - ns3::IntHeader::GetStaticSize();
    const uint64_t wireBits = (qp->m_size + packets * perPacket) * 8;
    const uint64_t ideal = pathRtt_[key] + wireBits * 1000000000u / paths_[key].bottleneckBps;
    const uint64_t now = ns3::Simulator::Now().GetTimeStep(), started = qp->startTime.GetTimeStep();
    std::fprintf(fctOut_, "%08x %08x %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", qp->sip.Get(),
                 qp->dip.Get(), unsigned(qp->sport), unsigned(qp->dport), uint64_t(qp->m_size), started,
                 now - started, ideal);
    std::fflush(fctOut_);
    Nic(dst)->DeleteRxQp(qp->sip.Get(), qp->m_pg, qp->sport);
  }

  void StartMonitors() {
    qlenOut_ = OpenOutput(sc_.qlenPath);
    if (!sc_.flowTracePath.empty()) flowOut_ = OpenOutput(sc_.flowTracePath);
    stopNs_ = uint64_t(sc_.stopSeconds * 1e9);
    ns3::Simulator::Schedule(ns3::NanoSeconds(0), &PeerRun::SampleQueues, this);
    if (flowOut_) ns3::Simulator::Schedule(ns3::NanoSeconds(0), &PeerRun::SampleFlows, this);
  }

  bool Again(uint64_t every) const { return ns3::Simulator::Now().GetTimeStep() + every <= stopNs_; }

  void SampleQueues() {
    const uint64_t now = ns3::Simulator::Now().GetTimeStep();
    for (uint32_t id = 0; id < nodes_.GetN(); ++id) {
      if (IsHost(id)) continue;
      Ptr<ns3::SwitchNode> sw = Switch(id);
      for (uint32_t p = 1; p < sw->GetNDevices(); ++p) {
        uint64_t queued = 0;
        for (uint32_t prio = 0; prio < ns3::SwitchMmu::qCnt; ++prio) queued += sw->m_mmu->egress_bytes[p][prio];
        std::fprintf(qlenOut_, "%" PRIu64 " %u %u %" PRIu64 "\n", now, id, p, queued);
      }
    }
    if (Again(sc_.qlenEveryNs)) ns3::Simulator::Schedule(ns3::NanoSeconds(sc_.qlenEveryNs), &PeerRun::SampleQueues, this);
  }

  void SampleFlows() {
    const uint64_t now = ns3::Simulator::Now().GetTimeStep();
    for (uint32_t id = 0; id < nodes_.GetN(); ++id) {
      if (!IsHost(id)) continue;
      Ptr<ns3::RdmaHw> hw = Nic(id);
      for (std::unordered_map<uint64_t, Ptr<ns3::RdmaQueuePair>>::iterator it = hw->m_qpMap.begin();
           it != hw->m_qpMap.end(); ++it) {
        Ptr<ns3::RdmaQueuePair> qp = it->second;
        std::fprintf(flowOut_, "%" PRIu64 " %u %u %u %" PRIu64 " %" PRIu64 "\n", now, id, NodeOfAddress(qp->dip.Get()),
                     unsigned(qp->sport), uint64_t(qp->snd_una), uint64_t(qp->m_rate.GetBitRate()));
      }
    }
    if (Again(sc_.flowEveryNs)) ns3::Simulator::Schedule(ns3::NanoSeconds(sc_.flowEveryNs), &PeerRun::SampleFlows, this);
  }

  const KeyValues &kv_;
  Scenario sc_;
  ns3::NodeContainer nodes_;
  std::vector<std::vector<Port>> ports_;
  std::deque<PfcTap> taps_;  // stable addresses for the trace callbacks
  std::map<std::pair<uint32_t, uint32_t>, PathFacts> paths_;  // (node, destination host)
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> pathRtt_;  // (source host, destination host)
  std::map<std::pair<uint32_t, uint32_t>, uint16_t> nextSport_;
  std::vector<uint16_t> flowSport_;  // per flow (flow-file order), set at its launch
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> firstHop_;  // (node, destination host) -> first next hop
  std::unique_ptr<FirmwareLib> firmware_;
  std::vector<RlFlow> rl_;
  uint64_t baseRttNs_ = 0, bdpBytes_ = 0, stopNs_ = 0;
  FILE *qlenOut_ = nullptr, *flowOut_ = nullptr, *fctOut_ = nullptr, *pfcOut_ = nullptr, *rlOut_ = nullptr;
};

}  // namespace

int main(int argc, char *argv[]) {
  if (argc != 2) {
    std::cerr << "usage: rlcc-peer CONFIG_FILE\n";
    return 2;
  }
  KeyValues config(argv[1]);
  PeerRun run(config);
  return run.Run();
}
