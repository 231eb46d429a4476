# Web search flow-size CDF (lines: size_bytes cdf_percent), numbers unchanged from
# github.com/alibaba-edu/High-Precision-Congestion-Control traffic_gen/WebSearch_distribution.txt
# at commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be (used in the HPCC paper, Li et al., SIGCOMM 2019).
# Original measurement: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
