"""Published flow-size CDFs shipped as data (``*.cdf``); load them with ``rlcc.simulator.flowsize.FlowSizeCdf.load``.

* ``websearch.cdf``: Alizadeh et al., DCTCP, SIGCOMM 2010 (web search cluster).
* ``hadoop.cdf``: Roy et al., "Inside the Social Network's (Datacenter) Network", SIGCOMM 2015
  (Facebook Hadoop cluster).

Both are the HPCC repository's ``traffic_gen`` files (alibaba-edu/High-Precision-Congestion-Control,
commit 9f4be2a), numbers unchanged; each file's header comment names its source.
"""
