/* rlcc-peer: the packet-level peer run of bench/peer_ns3 (rlcc issue 37).
 *
 * A scratch program for aliyun/ns-3-alibabacloud (ns-3.36 with the HPCC RDMA/qbb models), also
 * built in the HPCC repository's own ns-3.17 tree (bench/peer_ns3/build_hpcc.py). It is
 * the HPCC repository's simulation/scratch/third.cc (alibaba-edu/High-Precision-Congestion-Control
 * @ 9f4be2a) reduced to what the comparison needs and ported to this tree's API (RdmaClientHelper
 * arguments, AddTableEntry's nvswitch flag). The models are untouched. Same input formats:
 *   config file: "KEY value" lines (third.cc's keys, see bench/peer_ns3/scenarios.py);
 *   topology:    "nodes switches links" / switch ids / "src dst rate delay error_rate" lines;
 *   flows:       count / "src dst pg dport size_bytes start_s" lines.
 * Same outputs: FCT_OUTPUT_FILE and PFC_OUTPUT_FILE in third.cc's formats. Added (driver only):
 *   INIT_RATE_FRACTION f  (0 = line rate): a new QP's rate (and DCQCN target / HPCC current
 *                         rate) is set to f x line rate right after it is created;
 *   QLEN_MON_INTERVAL_NS, QLEN_TRACE_FILE: every interval "t_ns switch port egress_bytes" per
 *                         switch port (all priorities summed, as third.cc's monitor_buffer);
 *   FLOW_MON_INTERVAL_NS, FLOW_TRACE_FILE: every interval "t_ns src dst sport snd_una_bytes
 *                         rate_bps" per live QP.
 */

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/error-model.h"
#include "ns3/internet-module.h"
#include "ns3/packet.h"
#include "ns3/qbb-helper.h"
#include <ns3/rdma-client-helper.h>
#include <ns3/rdma-client.h>
#include <ns3/rdma-driver.h>
#include <ns3/rdma.h>
#include <ns3/switch-node.h>

// ns-3-alibabacloud (ns-3.36) or the HPCC repository's own tree (ns-3.17): a few signatures differ.
#if __has_include(<ns3/nvswitch-node.h>)
#define RLCC_PEER_ALIBABACLOUD 1
#else
#define RLCC_PEER_ALIBABACLOUD 0
#endif

using namespace ns3;
using namespace std;

NS_LOG_COMPONENT_DEFINE("RLCC_PEER");

static map<string, string> conf;

static string S(const string &k, const string &d) { return conf.count(k) ? conf[k] : d; }
static double D(const string &k, double d) { return conf.count(k) ? atof(conf[k].c_str()) : d; }
static uint64_t U(const string &k, uint64_t d) { return conf.count(k) ? strtoull(conf[k].c_str(), nullptr, 10) : d; }

static NodeContainer n;
static uint32_t packet_payload_size = 1000;
static uint64_t maxRtt = 0, maxBdp = 0;
static double init_rate_fraction = 0.0;
static uint32_t cc_mode = 1;
static uint64_t qlen_interval_ns = 1000, flow_interval_ns = 5000, stop_ns = 0;

struct Interface {
  uint32_t idx = 0;
  bool up = false;
  uint64_t delay = 0, bw = 0;
};
static map<Ptr<Node>, map<Ptr<Node>, Interface>> nbr2if;
static map<Ptr<Node>, map<Ptr<Node>, vector<Ptr<Node>>>> nextHop;
static map<Ptr<Node>, map<Ptr<Node>, uint64_t>> pairDelay, pairTxDelay;
static map<uint32_t, map<uint32_t, uint64_t>> pairBw, pairRtt;
static vector<Ipv4Address> serverAddress;
static unordered_map<uint32_t, unordered_map<uint32_t, uint16_t>> portNumber;

static Ipv4Address node_id_to_ip(uint32_t id) {
  return Ipv4Address(0x0b000001 + ((id / 256) * 0x00010000) + ((id % 256) * 0x00000100));
}
static uint32_t ip_to_node_id(Ipv4Address ip) { return (ip.Get() >> 8) & 0xffff; }

static void qp_finish(FILE *fout, Ptr<RdmaQueuePair> q) {
  uint32_t sid = ip_to_node_id(q->sip), did = ip_to_node_id(q->dip);
  uint64_t base_rtt = pairRtt[sid][did], b = pairBw[sid][did];
  uint32_t total_bytes = q->m_size + ((q->m_size - 1) / packet_payload_size + 1) *
                                         (CustomHeader::GetStaticWholeHeaderSize() - IntHeader::GetStaticSize());
  uint64_t standalone_fct = base_rtt + total_bytes * 8000000000lu / b;
  fprintf(fout, "%08x %08x %u %u %lu %lu %lu %lu\n", q->sip.Get(), q->dip.Get(), q->sport, q->dport, q->m_size,
          q->startTime.GetTimeStep(), (Simulator::Now() - q->startTime).GetTimeStep(), standalone_fct);
  fflush(fout);
  n.Get(did)->GetObject<RdmaDriver>()->m_rdma->DeleteRxQp(q->sip.Get(), q->m_pg, q->sport);
}

static void get_pfc(FILE *fout, Ptr<QbbNetDevice> dev, uint32_t type) {
  fprintf(fout, "%lu %u %u %u %u\n", Simulator::Now().GetTimeStep(), dev->GetNode()->GetId(),
          dev->GetNode()->GetNodeType(), dev->GetIfIndex(), type);
  fflush(fout);  // rare; kept on disk if a later event crashes the peer
}

static void monitor_queues(FILE *qf) {
  uint64_t now = Simulator::Now().GetTimeStep();
  for (uint32_t i = 0; i < n.GetN(); i++) {
    if (n.Get(i)->GetNodeType() != 1) continue;
    Ptr<SwitchNode> sw = DynamicCast<SwitchNode>(n.Get(i));
    for (uint32_t j = 1; j < sw->GetNDevices(); j++) {
      uint64_t size = 0;
      for (uint32_t k = 0; k < SwitchMmu::qCnt; k++) size += sw->m_mmu->egress_bytes[j][k];
      fprintf(qf, "%lu %u %u %lu\n", now, i, j, size);
    }
  }
  if (now + qlen_interval_ns <= stop_ns) Simulator::Schedule(NanoSeconds(qlen_interval_ns), &monitor_queues, qf);
}

static void monitor_flows(FILE *ff) {
  uint64_t now = Simulator::Now().GetTimeStep();
  for (uint32_t i = 0; i < n.GetN(); i++) {
    if (n.Get(i)->GetNodeType() != 0) continue;
    for (auto &kv : n.Get(i)->GetObject<RdmaDriver>()->m_rdma->m_qpMap) {
      Ptr<RdmaQueuePair> q = kv.second;
      fprintf(ff, "%lu %u %u %u %lu %lu\n", now, i, ip_to_node_id(q->dip), q->sport, q->snd_una,
              q->m_rate.GetBitRate());
    }
  }
  if (now + flow_interval_ns <= stop_ns) Simulator::Schedule(NanoSeconds(flow_interval_ns), &monitor_flows, ff);
}

static void set_initial_rate(Ptr<RdmaQueuePair> q) {
  DataRate r(uint64_t(q->m_max_rate.GetBitRate() * init_rate_fraction));
  q->m_rate = r;
  if (cc_mode == 1) q->mlx.m_targetRate = r;
  if (cc_mode == 3) q->hp.m_curRate = r;
}

// The QP appears when the application starts, two zero-delay events after its installation
// (Node::AddApplication schedules Initialize, which schedules StartApplication): look again
// at the same timestamp until it is there.
static void set_initial_rate_of(Ptr<RdmaHw> hw, uint64_t key, uint32_t tries) {
  auto it = hw->m_qpMap.find(key);
  if (it != hw->m_qpMap.end())
    set_initial_rate(it->second);
  else if (tries > 0)
    Simulator::ScheduleNow(&set_initial_rate_of, hw, key, tries - 1);
  else
    NS_ABORT_MSG("INIT_RATE_FRACTION: the QP did not start");
}

struct FlowInput {
  uint32_t src, dst, pg, dport;
  uint64_t size;
  double start_time;
};

static void start_flow(FlowInput f, uint32_t win) {
  uint16_t port = portNumber[f.src][f.dst]++;
#if RLCC_PEER_ALIBABACLOUD
  RdmaClientHelper helper(f.pg, serverAddress[f.src], serverAddress[f.dst], port, f.dport, f.size, win, maxRtt,
                          nullptr, nullptr, 0, f.src, f.dst);
#else
  RdmaClientHelper helper(f.pg, serverAddress[f.src], serverAddress[f.dst], port, f.dport, f.size, win, maxRtt);
#endif
  ApplicationContainer app = helper.Install(n.Get(f.src));
  app.Start(Time(0));
  if (init_rate_fraction > 0) {
    Ptr<RdmaHw> hw = n.Get(f.src)->GetObject<RdmaDriver>()->m_rdma;
    uint64_t key = RdmaHw::GetQpKey(serverAddress[f.dst].Get(), port, f.pg);
    Simulator::ScheduleNow(&set_initial_rate_of, hw, key, 8u);
  }
}

static void CalculateRoute(Ptr<Node> host) {
  vector<Ptr<Node>> q{host};
  map<Ptr<Node>, int> dis{{host, 0}};
  map<Ptr<Node>, uint64_t> delay{{host, 0}}, txDelay{{host, 0}}, bw{{host, 0xfffffffffffffffflu}};
  for (size_t i = 0; i < q.size(); i++) {
    Ptr<Node> now = q[i];
    int d = dis[now];
    for (auto &it : nbr2if[now]) {
      if (!it.second.up) continue;
      Ptr<Node> next = it.first;
      if (dis.find(next) == dis.end()) {
        dis[next] = d + 1;
        delay[next] = delay[now] + it.second.delay;
        txDelay[next] = txDelay[now] + packet_payload_size * 1000000000lu * 8 / it.second.bw;
        bw[next] = std::min(bw[now], it.second.bw);
        if (next->GetNodeType() == 1) q.push_back(next);
      }
      if (d + 1 == dis[next]) nextHop[next][host].push_back(now);
    }
  }
  for (auto &it : delay) pairDelay[it.first][host] = it.second;
  for (auto &it : txDelay) pairTxDelay[it.first][host] = it.second;
  for (auto &it : bw) pairBw[it.first->GetId()][host->GetId()] = it.second;
}

static void SetRoutingEntries() {
  for (auto &i : nextHop) {
    Ptr<Node> node = i.first;
    for (auto &j : i.second) {
      Ipv4Address dstAddr = j.first->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
      for (Ptr<Node> next : j.second) {
        uint32_t interface = nbr2if[node][next].idx;
        if (node->GetNodeType() == 1)
          DynamicCast<SwitchNode>(node)->AddTableEntry(dstAddr, interface);
        else
#if RLCC_PEER_ALIBABACLOUD
          node->GetObject<RdmaDriver>()->m_rdma->AddTableEntry(dstAddr, interface, false);
#else
          node->GetObject<RdmaDriver>()->m_rdma->AddTableEntry(dstAddr, interface);
#endif
      }
    }
  }
}

static void read_map(const string &key, unordered_map<uint64_t, double> &out) {
  istringstream is(S(key, "0"));
  int k;
  is >> k;
  for (int i = 0; i < k; i++) {
    uint64_t rate;
    double v;
    is >> rate >> v;
    out[rate] = v;
  }
}

int main(int argc, char *argv[]) {
  if (argc < 2) {
    cerr << "usage: rlcc-peer CONFIG_FILE\n";
    return 2;
  }
  {
    ifstream cf(argv[1]);
    if (!cf) {
      cerr << "rlcc-peer: cannot read " << argv[1] << "\n";
      return 3;
    }
    string line;
    while (getline(cf, line)) {
      istringstream is(line);
      string key, rest;
      if (!(is >> key)) continue;
      getline(is, rest);
      size_t a = rest.find_first_not_of(" \t");
      conf[key] = a == string::npos ? "" : rest.substr(a);
    }
  }
  packet_payload_size = U("PACKET_PAYLOAD_SIZE", 1000);
  cc_mode = U("CC_MODE", 1);
  init_rate_fraction = D("INIT_RATE_FRACTION", 0.0);
  qlen_interval_ns = U("QLEN_MON_INTERVAL_NS", 1000);
  flow_interval_ns = U("FLOW_MON_INTERVAL_NS", 5000);
  bool enable_qcn = U("ENABLE_QCN", 1);
  uint32_t has_win = U("HAS_WIN", 1), ack_high_prio = U("ACK_HIGH_PRIO", 0);
  double stop_s = D("SIMULATOR_STOP_TIME", 0.01);
  stop_ns = uint64_t(stop_s * 1e9);
  unordered_map<uint64_t, double> kmin, kmax, pmax;
  read_map("KMIN_MAP", kmin);
  read_map("KMAX_MAP", kmax);
  read_map("PMAX_MAP", pmax);

  Config::SetDefault("ns3::QbbNetDevice::PauseTime", UintegerValue(U("PAUSE_TIME", 5)));
  Config::SetDefault("ns3::QbbNetDevice::QcnEnabled", BooleanValue(enable_qcn));
  Config::SetDefault("ns3::QbbNetDevice::DynamicThreshold", BooleanValue(U("USE_DYNAMIC_PFC_THRESHOLD", 1)));
  IntHop::multi = U("INT_MULTI", 1);
  IntHeader::mode = cc_mode == 3 ? IntHeader::NORMAL : (cc_mode == 7 ? IntHeader::TS : IntHeader::NONE);

  ifstream topof(S("TOPOLOGY_FILE", "")), flowf(S("FLOW_FILE", ""));
  if (!topof || !flowf) {
    cerr << "rlcc-peer: cannot read TOPOLOGY_FILE or FLOW_FILE\n";
    return 3;
  }
  uint32_t node_num, switch_num, link_num, flow_num;
  topof >> node_num >> switch_num >> link_num;
  vector<uint32_t> node_type(node_num, 0);
  for (uint32_t i = 0; i < switch_num; i++) {
    uint32_t sid;
    topof >> sid;
    node_type[sid] = 1;
  }
  for (uint32_t i = 0; i < node_num; i++) {
    if (node_type[i] == 0)
      n.Add(CreateObject<Node>());
    else {
      Ptr<SwitchNode> sw = CreateObject<SwitchNode>();
      n.Add(sw);
      sw->SetAttribute("EcnEnabled", BooleanValue(enable_qcn));
    }
  }
  InternetStackHelper internet;
  internet.Install(n);
  for (uint32_t i = 0; i < node_num; i++)
    if (n.Get(i)->GetNodeType() == 0) {
      serverAddress.resize(i + 1);
      serverAddress[i] = node_id_to_ip(i);
    }

  FILE *pfc_file = fopen(S("PFC_OUTPUT_FILE", "pfc.txt").c_str(), "w");
  Ptr<RateErrorModel> rem = CreateObject<RateErrorModel>();
  Ptr<UniformRandomVariable> uv = CreateObject<UniformRandomVariable>();
  rem->SetRandomVariable(uv);
  uv->SetStream(50);
  rem->SetAttribute("ErrorRate", DoubleValue(0.0));
  rem->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
  QbbHelper qbb;
  Ipv4AddressHelper ipv4;
  for (uint32_t i = 0; i < link_num; i++) {
    uint32_t src, dst;
    string data_rate, link_delay;
    double error_rate;
    topof >> src >> dst >> data_rate >> link_delay >> error_rate;
    Ptr<Node> snode = n.Get(src), dnode = n.Get(dst);
    qbb.SetDeviceAttribute("DataRate", StringValue(data_rate));
    qbb.SetChannelAttribute("Delay", StringValue(link_delay));
    qbb.SetDeviceAttribute("ReceiveErrorModel", PointerValue(rem));
    NetDeviceContainer d = qbb.Install(snode, dnode);
    if (snode->GetNodeType() == 0) {
      Ptr<Ipv4> ip = snode->GetObject<Ipv4>();
      ip->AddInterface(d.Get(0));
      ip->AddAddress(1, Ipv4InterfaceAddress(serverAddress[src], Ipv4Mask(0xff000000)));
    }
    if (dnode->GetNodeType() == 0) {
      Ptr<Ipv4> ip = dnode->GetObject<Ipv4>();
      ip->AddInterface(d.Get(1));
      ip->AddAddress(1, Ipv4InterfaceAddress(serverAddress[dst], Ipv4Mask(0xff000000)));
    }
    for (int side = 0; side < 2; side++) {
      Ptr<QbbNetDevice> dev = DynamicCast<QbbNetDevice>(d.Get(side));
      Interface &f = side == 0 ? nbr2if[snode][dnode] : nbr2if[dnode][snode];
      f.idx = dev->GetIfIndex();
      f.up = true;
      f.delay = DynamicCast<QbbChannel>(dev->GetChannel())->GetDelay().GetTimeStep();
      f.bw = dev->GetDataRate().GetBitRate();
      dev->TraceConnectWithoutContext("QbbPfc", MakeBoundCallback(&get_pfc, pfc_file, dev));
    }
    char ipstring[16];
    sprintf(ipstring, "10.%d.%d.0", i / 254 + 1, i % 254 + 1);
    ipv4.SetBase(ipstring, "255.255.255.0");
    ipv4.Assign(d);
  }

  uint64_t nic_rate = 0;
  for (uint32_t i = 0; i < node_num && !nic_rate; i++)
    if (n.Get(i)->GetNodeType() == 0)
      nic_rate = DynamicCast<QbbNetDevice>(n.Get(i)->GetDevice(1))->GetDataRate().GetBitRate();
  for (uint32_t i = 0; i < node_num; i++) {
    if (n.Get(i)->GetNodeType() != 1) continue;
    Ptr<SwitchNode> sw = DynamicCast<SwitchNode>(n.Get(i));
    for (uint32_t j = 1; j < sw->GetNDevices(); j++) {
      Ptr<QbbNetDevice> dev = DynamicCast<QbbNetDevice>(sw->GetDevice(j));
      uint64_t rate = dev->GetDataRate().GetBitRate();
      NS_ABORT_MSG_IF(!kmin.count(rate) || !kmax.count(rate) || !pmax.count(rate),
                      "KMIN_MAP / KMAX_MAP / PMAX_MAP need an entry for every link rate");
      sw->m_mmu->ConfigEcn(j, uint32_t(kmin[rate]), uint32_t(kmax[rate]), pmax[rate]);
      uint64_t delay = DynamicCast<QbbChannel>(dev->GetChannel())->GetDelay().GetTimeStep();
      sw->m_mmu->ConfigHdrm(j, rate * delay / 8 / 1000000000 * 3);
      sw->m_mmu->pfc_a_shift[j] = 3;
      while (rate > nic_rate && sw->m_mmu->pfc_a_shift[j] > 0) {
        sw->m_mmu->pfc_a_shift[j]--;
        rate /= 2;
      }
    }
    sw->m_mmu->ConfigNPort(sw->GetNDevices() - 1);
    sw->m_mmu->ConfigBufferSize(U("BUFFER_SIZE", 32) * 1024 * 1024);
    sw->m_mmu->node_id = sw->GetId();
  }

  FILE *fct_output = fopen(S("FCT_OUTPUT_FILE", "fct.txt").c_str(), "w");
  for (uint32_t i = 0; i < node_num; i++) {
    if (n.Get(i)->GetNodeType() != 0) continue;
    Ptr<RdmaHw> hw = CreateObject<RdmaHw>();
    hw->SetAttribute("ClampTargetRate", BooleanValue(U("CLAMP_TARGET_RATE", 0)));
    hw->SetAttribute("AlphaResumInterval", DoubleValue(D("ALPHA_RESUME_INTERVAL", 55)));
    hw->SetAttribute("RPTimer", DoubleValue(D("RP_TIMER", 300)));
    hw->SetAttribute("FastRecoveryTimes", UintegerValue(U("FAST_RECOVERY_TIMES", 5)));
    hw->SetAttribute("EwmaGain", DoubleValue(D("EWMA_GAIN", 1.0 / 16)));
    hw->SetAttribute("RateAI", DataRateValue(DataRate(S("RATE_AI", "5Mb/s"))));
    hw->SetAttribute("RateHAI", DataRateValue(DataRate(S("RATE_HAI", "50Mb/s"))));
    hw->SetAttribute("L2BackToZero", BooleanValue(U("L2_BACK_TO_ZERO", 0)));
    hw->SetAttribute("L2ChunkSize", UintegerValue(U("L2_CHUNK_SIZE", 0)));
    hw->SetAttribute("L2AckInterval", UintegerValue(U("L2_ACK_INTERVAL", 0)));
    hw->SetAttribute("CcMode", UintegerValue(cc_mode));
    hw->SetAttribute("RateDecreaseInterval", DoubleValue(D("RATE_DECREASE_INTERVAL", 4)));
    hw->SetAttribute("MinRate", DataRateValue(DataRate(S("MIN_RATE", "100Mb/s"))));
    hw->SetAttribute("Mtu", UintegerValue(packet_payload_size));
    hw->SetAttribute("MiThresh", UintegerValue(U("MI_THRESH", 5)));
    hw->SetAttribute("VarWin", BooleanValue(U("VAR_WIN", 0)));
    hw->SetAttribute("FastReact", BooleanValue(U("FAST_REACT", 1)));
    hw->SetAttribute("MultiRate", BooleanValue(U("MULTI_RATE", 1)));
    hw->SetAttribute("SampleFeedback", BooleanValue(U("SAMPLE_FEEDBACK", 0)));
    hw->SetAttribute("TargetUtil", DoubleValue(D("U_TARGET", 0.95)));
    hw->SetAttribute("RateBound", BooleanValue(U("RATE_BOUND", 1)));
    hw->SetAttribute("DctcpRateAI", DataRateValue(DataRate(S("DCTCP_RATE_AI", "1000Mb/s"))));
    hw->SetPintSmplThresh(D("PINT_PROB", 1.0));
    Ptr<RdmaDriver> rdma = CreateObject<RdmaDriver>();
    Ptr<Node> node = n.Get(i);
    rdma->SetNode(node);
    rdma->SetRdmaHw(hw);
    node->AggregateObject(rdma);
    rdma->Init();
    rdma->TraceConnectWithoutContext("QpComplete", MakeBoundCallback(qp_finish, fct_output));
  }
  RdmaEgressQueue::ack_q_idx = ack_high_prio ? 0 : 3;

  for (uint32_t i = 0; i < n.GetN(); i++)
    if (n.Get(i)->GetNodeType() == 0) CalculateRoute(n.Get(i));
  SetRoutingEntries();

  for (uint32_t i = 0; i < node_num; i++) {
    if (n.Get(i)->GetNodeType() != 0) continue;
    for (uint32_t j = 0; j < node_num; j++) {
      if (n.Get(j)->GetNodeType() != 0) continue;
      uint64_t rtt = pairDelay[n.Get(i)][n.Get(j)] * 2 + pairTxDelay[n.Get(i)][n.Get(j)];
      uint64_t bdp = rtt * pairBw[i][j] / 1000000000 / 8;
      pairRtt[i][j] = rtt;
      maxBdp = std::max(maxBdp, bdp);
      maxRtt = std::max(maxRtt, rtt);
    }
  }
  printf("maxRtt=%lu maxBdp=%lu\n", maxRtt, maxBdp);
  for (uint32_t i = 0; i < node_num; i++)
    if (n.Get(i)->GetNodeType() == 1) {
      Ptr<SwitchNode> sw = DynamicCast<SwitchNode>(n.Get(i));
      sw->SetAttribute("CcMode", UintegerValue(cc_mode));
      sw->SetAttribute("MaxRtt", UintegerValue(maxRtt));
    }
  for (uint32_t i = 0; i < node_num; i++)
    for (uint32_t j = 0; j < node_num; j++) portNumber[i][j] = 10000;

  flowf >> flow_num;
  uint32_t win = has_win ? uint32_t(maxBdp) : 0;  // GLOBAL_T 1: one network-wide window and T
  for (uint32_t i = 0; i < flow_num; i++) {
    FlowInput f;
    flowf >> f.src >> f.dst >> f.pg >> f.dport >> f.size >> f.start_time;
    NS_ABORT_MSG_IF(!flowf || f.src >= node_num || f.dst >= node_num || node_type[f.src] || node_type[f.dst],
                    "bad flow line " << i + 1);
    Simulator::Schedule(Seconds(f.start_time), &start_flow, f, win);
  }

  FILE *qf = fopen(S("QLEN_TRACE_FILE", "qlen_trace.txt").c_str(), "w");
  FILE *ff = conf.count("FLOW_TRACE_FILE") ? fopen(S("FLOW_TRACE_FILE", "").c_str(), "w") : nullptr;
  Simulator::Schedule(NanoSeconds(0), &monitor_queues, qf);
  if (ff) Simulator::Schedule(NanoSeconds(0), &monitor_flows, ff);

  Simulator::Stop(Seconds(stop_s));
  Simulator::Run();
  Simulator::Destroy();
  fclose(qf);
  if (ff) fclose(ff);
  fclose(fct_output);
  fclose(pfc_file);
  return 0;
}
